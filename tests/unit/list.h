/* list.h - every C unit test, one T(name) per test_name() (see unit.h). */
T(strbuf_basics)
T(trace_roundtrip)
T(trace_truncated)
T(trace_corrupt)
T(trace_newer_major)
T(trace_blob_dedup)
