/*
 * capture-dump.c - test helper: print a trace one record per line in a
 * fixed, grep-friendly form for the capture tests (t1003), independent of
 * `gpureduce show`'s YAML.  Reads through trace/trace.h; H2D lines include
 * the first bytes of the blob as decoded (so the test sees the bytes that
 * entered the GPU, checked against their hash by trace_blob_read).
 *
 *   usage: capture-dump TRACE     exit 0, or 3 with the reader's error
 */
#include <stdio.h>
#include <string.h>

#include "../../../common/strbuf.h"
#include "../../../trace/trace.h"

static void hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

int main(int argc, char **argv)
{
	struct trace t = TRACE_INIT;
	struct strbuf err = STRBUF_INIT, data = STRBUF_INIT;

	if (argc != 2) {
		fprintf(stderr, "usage: capture-dump TRACE\n");
		return 2;
	}
	if (trace_open(&t, argv[1], 0, &err) < 0) {
		fprintf(stderr, "capture-dump: %s\n", err.buf);
		return 3;
	}
	for (size_t i = 0; i < t.nrec; i++) {
		const struct tr_rec *r = &t.rec[i];
		switch (r->type) {
		case TR_PROCESS:
			printf("PROCESS pid=%u argc=%u argv0=%s cwd=%s\n", r->u.process.pid,
			       r->u.process.argc, r->u.process.argc ? r->u.process.argv[0] : "",
			       r->u.process.cwd);
			break;
		case TR_DEVICE:
			printf("DEVICE name=%s cc=%u.%u driver=%u toolkit=%u mem=%llu sms=%u\n",
			       r->u.device.name, r->u.device.cc_major, r->u.device.cc_minor,
			       r->u.device.driver_version, r->u.device.toolkit_version,
			       (unsigned long long)r->u.device.total_mem, r->u.device.sm_count);
			break;
		case TR_BLOB:
			printf("BLOB raw=%llu\n", (unsigned long long)r->u.blob.raw_size);
			break;
		case TR_MODULE:
			printf("MODULE id=%u kind=%u size=%llu blob=%s\n", r->u.module.module_id,
			       r->u.module.kind, (unsigned long long)r->u.module.size,
			       trace_find_blob(&t, r->u.module.blob) >= 0 ? "found" : "missing");
			break;
		case TR_ALLOC:
			printf("ALLOC addr=0x%llx size=%llu kind=%s name=%s", (unsigned long long)r->u.alloc.addr,
			       (unsigned long long)r->u.alloc.size, tr_alloc_kind_name(r->u.alloc.kind), r->u.alloc.name);
			if (r->u.alloc.flags)
				printf(" flags=0x%x", r->u.alloc.flags);
			printf("\n");
			break;
		case TR_FREE:
			printf("FREE addr=0x%llx kind=%s\n", (unsigned long long)r->u.free.addr,
			       tr_alloc_kind_name(r->u.free.kind));
			break;
		case TR_MEMCPY_H2D:
		case TR_MEMCPY_D2D:
		case TR_MEMCPY_D2H:
			printf("%s dst=0x%llx src=0x%llx size=%llu stream=0x%llx flags=%u",
			       r->type == TR_MEMCPY_H2D ? "H2D" : r->type == TR_MEMCPY_D2D ? "D2D" : "D2H",
			       (unsigned long long)r->u.copy.dst, (unsigned long long)r->u.copy.src,
			       (unsigned long long)r->u.copy.size, (unsigned long long)r->u.copy.stream,
			       r->u.copy.flags);
			if (r->type == TR_MEMCPY_H2D) {
				sb_reset(&data);
				sb_reset(&err);
				if (trace_blob_read(&t, r->u.copy.blob, &data, 0, &err) < 0) {
					printf(" data=ERROR(%s)", err.buf);
				} else {
					printf(" datalen=%zu data=", data.len);
					hex((const uint8_t *)data.buf, data.len < 8 ? data.len : 8);
				}
			}
			printf("\n");
			break;
		case TR_MEMSET:
			printf("MEMSET dst=0x%llx value=0x%x elem=%u width=%llu height=%llu pitch=%llu stream=0x%llx flags=%u\n",
			       (unsigned long long)r->u.memset.dst, r->u.memset.value, r->u.memset.elem_size,
			       (unsigned long long)r->u.memset.width, (unsigned long long)r->u.memset.height,
			       (unsigned long long)r->u.memset.pitch, (unsigned long long)r->u.memset.stream,
			       r->u.memset.flags);
			break;
		case TR_LAUNCH: {
			const struct tr_launch *l = &r->u.launch;
			printf("LAUNCH seq=%llu name=%s api=%u flags=%u grid=%u,%u,%u block=%u,%u,%u shmem=%u stream=0x%llx params=",
			       (unsigned long long)l->seq, l->name, l->api, l->flags, l->grid.x, l->grid.y,
			       l->grid.z, l->block.x, l->block.y, l->block.z, l->shmem,
			       (unsigned long long)l->stream);
			for (uint32_t k = 0; k < l->nparams; k++)
				printf("%s%u:%u", k ? "," : "", l->params[k].offset, l->params[k].size);
			printf(" args=");
			hex(l->args, l->argsize);
			printf(" attrs=");
			for (uint32_t k = 0; k < l->nattrs; k++) {
				printf("%s%u:%u:", k ? "," : "", l->attrs[k].id, l->attrs[k].len);
				hex(l->attrs[k].value, 4);
			}
			printf(" py=%u frames=%u tid=%s", l->py_state, l->nframes, l->tid ? "set" : "0");
			if (l->nframes)   /* innermost frame: where the launch came from */
				printf(" at=%s:%u:%s", l->frames[0].file, l->frames[0].line, l->frames[0].func);
			printf("\n");
			break;
		}
		case TR_FAULT:
			printf("FAULT code=%u error=%s api=%s seq=%llu at_launch=%u kernel=%s\n",
			       r->u.fault.code, r->u.fault.error, r->u.fault.api,
			       (unsigned long long)r->u.fault.launch_seq, r->u.fault.at_launch,
			       r->u.fault.kernel);
			break;
		case TR_FUNC_ATTR:
			printf("FUNC_ATTR kernel=%s attr=%u value=%d\n", r->u.func_attr.kernel,
			       r->u.func_attr.attr, r->u.func_attr.value);
			break;
		case TR_FUNC_INFO:
			printf("FUNC_INFO func=0x%llx name=%s max_threads=%d regs=%d shared=%d const=%d local=%d "
			       "ptx=%d binary=%d\n", (unsigned long long)r->u.func_info.func, r->u.func_info.name,
			       r->u.func_info.max_threads, r->u.func_info.num_regs, r->u.func_info.shared_bytes,
			       r->u.func_info.const_bytes, r->u.func_info.local_bytes, r->u.func_info.ptx_version,
			       r->u.func_info.binary_version);
			break;
		case TR_END:
			printf("END exit=%d launches=%llu allocs=%llu h2d=%llu\n", r->u.end.exit_code,
			       (unsigned long long)r->u.end.launches, (unsigned long long)r->u.end.allocs,
			       (unsigned long long)r->u.end.bytes_h2d);
			break;
		case TR_NOTE:
			printf("NOTE %s\n", r->u.note.text);
			break;
		case TR_GRAPH_BEGIN:
		case TR_GRAPH_END:
		case TR_GRAPH_EXEC:
		case TR_GRAPH_LAUNCH:
			printf("%s stream=0x%llx graph=0x%llx exec=0x%llx\n", tr_type_name(r->type),
			       (unsigned long long)r->u.graph.stream, (unsigned long long)r->u.graph.graph,
			       (unsigned long long)r->u.graph.exec);
			break;
		case TR_BLOCK_ALLOC:
			printf("BLOCK_ALLOC addr=0x%llx size=%llu alloc=%llu seg=0x%llx src=%u flags=0x%x at=%s:%u:%s\n",
			       (unsigned long long)r->u.block.addr, (unsigned long long)r->u.block.size,
			       (unsigned long long)r->u.block.alloc_size, (unsigned long long)r->u.block.segment,
			       r->u.block.source, r->u.block.flags, r->u.block.file, r->u.block.line,
			       r->u.block.func);
			break;
		case TR_BLOCK_FREE:
			printf("BLOCK_FREE addr=0x%llx%s\n", (unsigned long long)r->u.block_free.addr,
			       r->u.block_free.flags & TR_BLKFREE_F_UNKNOWN ? " unknown" : "");
			break;
		case TR_BLOCK_BATCH:
			printf("BLOCK_BATCH seq=%llu known=%llu\n", (unsigned long long)r->u.block_batch.seq,
			       (unsigned long long)r->u.block_batch.known);
			break;
		default:
			printf("%s\n", tr_type_name(r->type));
		}
	}
	if (t.truncated)
		printf("TRUNCATED %s\n", t.truncated_msg);
	trace_release(&t);
	sb_release(&err);
	sb_release(&data);
	return 0;
}
