/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_FLOOR_H
#define PERF_FLOOR_H

/*
 * Floors measured in the same run as the RDMA figures, on the same cores:
 * what the machine can do without drnic in the way.
 */
#include <stddef.h>
#include <stdint.h>

/*
 * rte_ring SP/SC ping-pong between the calling lcore and @peer_lcore: one
 * pointer there and back per sample. Fills @samples[0..iters) with round-trip
 * TSC cycles. Returns 0, -EINVAL (bad lcore, peer busy), -ENOMEM.
 */
int perf_floor_ring_rtt(unsigned int peer_lcore, uint64_t *samples, size_t iters);

/*
 * rte_memcpy bandwidth in GB/s (1e9 bytes/s), median of several runs.
 * @hot: the same @size buffers again and again (cache-hot); otherwise
 * walks through 512 MiB so each copy comes from DRAM.
 */
double perf_floor_memcpy_gbps(size_t size, int hot);

#endif
