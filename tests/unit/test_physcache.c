/*
 * test_physcache.c - replay's cache of released physical handles
 * (replay/physcache.c) against a mock driver: a handle released comes
 * back for the next buffer of its size and properties and for nothing
 * else, the cap holds, OUT_OF_MEMORY gives the kept ones back first, a
 * flush releases every kept handle, and a long churn neither leaks nor
 * grows the table (a model of live handles is checked after every step).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../replay/physcache.h"
#include "unit.h"

static unsigned long m_next = 1, m_live, m_creates, m_releases;
static int m_oom_after = -1;   /* fail creates once this many handles are live */
static unsigned char m_alive[4096];

static CUresult m_create(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *p, unsigned long long f)
{
	(void)n; (void)p; (void)f;
	if (m_oom_after >= 0 && m_live >= (unsigned long)m_oom_after)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*h = (CUmemGenericAllocationHandle)(m_next++);
	m_alive[*h % sizeof(m_alive)] = 1;
	m_live++;
	m_creates++;
	return CUDA_SUCCESS;
}

static CUresult m_release(CUmemGenericAllocationHandle h)
{
	if (!m_alive[h % sizeof(m_alive)])
		return CUDA_ERROR_INVALID_VALUE;   /* released twice: the test fails below */
	m_alive[h % sizeof(m_alive)] = 0;
	m_live--;
	m_releases++;
	return CUDA_SUCCESS;
}

static CUmemAllocationProp prop_dev(int dev)
{
	CUmemAllocationProp p;
	memset(&p, 0, sizeof(p));
	p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = dev;
	return p;
}

UNIT_TEST(physcache_reuses_by_size_and_props)
{
	struct place_vmm v;
	CUmemAllocationProp p0 = prop_dev(0), p1 = prop_dev(1);
	CUmemGenericAllocationHandle a, b, c, d, e;
	struct physcache_stats st;
	const size_t M2 = 2u << 20;

	memset(&v, 0, sizeof(v));
	CHECK(physcache_install(&v, 1 << 30) < 0);   /* no driver calls to wrap */
	v.MemCreate = m_create;
	v.MemRelease = m_release;
	CHECK(physcache_install(&v, 6u << 20) == 0);
	CHECK(v.MemCreate != m_create && v.MemRelease != m_release);
	m_creates = m_releases = m_live = 0;

	CHECK(v.MemCreate(&a, M2, &p0, 0) == CUDA_SUCCESS);
	CHECK(v.MemRelease(a) == CUDA_SUCCESS);
	CHECK_EQ_U(m_releases, 0);                    /* kept */
	CHECK(v.MemCreate(&b, M2, &p0, 0) == CUDA_SUCCESS);
	CHECK_EQ_U(b, a);                             /* the same size: handed back */
	CHECK_EQ_U(m_creates, 1);
	CHECK(v.MemRelease(b) == CUDA_SUCCESS);
	CHECK(v.MemCreate(&c, 2 * M2, &p0, 0) == CUDA_SUCCESS);
	CHECK(c != a);                                /* another size: a new one */
	CHECK(v.MemCreate(&d, M2, &p1, 0) == CUDA_SUCCESS);
	CHECK(d != a);                                /* another device: a new one */
	CHECK(v.MemCreate(&e, M2, &p0, 1) == CUDA_SUCCESS);
	CHECK(e != a);                                /* flags: never from the cache */
	CHECK(v.MemRelease(e) == CUDA_SUCCESS);
	CHECK_EQ_U(m_releases, 1);                    /* ...nor into it */
	/* the cap (6 MiB): a (2) kept, c (4) fits, d (2) does not */
	CHECK(v.MemRelease(c) == CUDA_SUCCESS);
	CHECK(v.MemRelease(d) == CUDA_SUCCESS);
	CHECK_EQ_U(m_releases, 2);
	physcache_get_stats(&st);
	CHECK_EQ_U(st.bytes, 6u << 20);
	physcache_flush();
	CHECK_EQ_U(m_live, 0);                        /* everything given back */
	physcache_get_stats(&st);
	CHECK_EQ_U(st.bytes, 0);
}

UNIT_TEST(physcache_oom_gives_kept_back_first)
{
	struct place_vmm v;
	CUmemAllocationProp p0 = prop_dev(0);
	CUmemGenericAllocationHandle h[3], x;
	const size_t M2 = 2u << 20;

	memset(&v, 0, sizeof(v));
	v.MemCreate = m_create;
	v.MemRelease = m_release;
	physcache_install(&v, 1ull << 30);
	m_creates = m_releases = m_live = 0;
	for (int i = 0; i < 3; i++)
		CHECK(v.MemCreate(&h[i], M2, &p0, 0) == CUDA_SUCCESS);
	for (int i = 0; i < 3; i++)
		CHECK(v.MemRelease(h[i]) == CUDA_SUCCESS);
	m_oom_after = 3;                              /* the device is full of kept handles */
	CHECK(v.MemCreate(&x, 4 * M2, &p0, 0) == CUDA_SUCCESS);
	CHECK_EQ_U(m_live, 1);                        /* the three went back, then it fit */
	m_oom_after = 1;
	CHECK(v.MemCreate(&x, 4 * M2, &p0, 0) == CUDA_ERROR_OUT_OF_MEMORY);
	m_oom_after = -1;
	physcache_flush();
	physcache_abandon();
}

UNIT_TEST(physcache_churn_model)
{
	struct place_vmm v;
	CUmemAllocationProp p0 = prop_dev(0);
	enum { N = 300 };
	CUmemGenericAllocationHandle live[N];
	size_t sz[N];
	int n = 0, bad = 0;
	struct physcache_stats st;
	uint64_t seed = 12345;

	memset(&v, 0, sizeof(v));
	v.MemCreate = m_create;
	v.MemRelease = m_release;
	physcache_install(&v, 64u << 20);
	m_creates = m_releases = m_live = 0;
	memset(m_alive, 0, sizeof(m_alive));
	for (int step = 0; step < 20000; step++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		if (n < N && ((seed >> 33) % 3 || !n)) {
			sz[n] = (size_t)(1 + (seed >> 40) % 4) << 21;
			if (v.MemCreate(&live[n], sz[n], &p0, 0) != CUDA_SUCCESS)
				bad++;
			for (int k = 0; k < n; k++)
				if (live[k] == live[n])
					bad++;        /* one handle given twice */
			n++;
		} else {
			int k = (int)((seed >> 20) % (uint64_t)n);
			if (v.MemRelease(live[k]) != CUDA_SUCCESS)
				bad++;
			live[k] = live[--n];
			sz[k] = sz[n];
		}
	}
	physcache_get_stats(&st);
	CHECK_EQ_U(bad, 0);
	CHECK(st.reused > 1000);                      /* the churn was served from the cache */
	CHECK(st.bytes <= (64u << 20));
	CHECK(m_live >= (unsigned long)n);             /* the live ones, and the kept */
	CHECK(m_live <= (unsigned long)n + st.bytes / (2u << 20));
	for (int k = 0; k < n; k++)
		CHECK(v.MemRelease(live[k]) == CUDA_SUCCESS);
	physcache_flush();
	CHECK_EQ_U(m_live, 0);                        /* no leak, no double release */
	physcache_abandon();
}
