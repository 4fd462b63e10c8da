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

/* Same with each of the 7 runs lasting @ms milliseconds. */
double perf_floor_memcpy_gbps_ms(size_t size, int hot, unsigned int ms);

/*
 * Ping-pong through the link the benchmarks use (loopback: the driver's ops
 * directly, as the engine calls them, with a pre-built @frame_len frame): the
 * calling lcore sends one frame on end A, @peer_lcore echoes it from end B.
 * Fills @samples[0..iters) with round-trip cycles; @mpps_one_core receives the
 * frames per second (millions) one core moves through the link A->B in
 * bursts of 32. Returns 0, -EINVAL, -EBUSY, -ENOMEM, -ENODEV.
 */
int perf_floor_link_rtt(unsigned int peer_lcore, uint16_t frame_len, uint64_t *samples,
			size_t iters, double *mpps_one_core);

/* ICRC (drnic_wire_icrc_buf) bandwidth in GB/s over an IPv4 packet of @payload bytes. */
double perf_floor_icrc_gbps(uint32_t payload);

/*
 * The same, run on @lcore (a worker that is free, or the calling lcore): how
 * fast that CPU computes now. Two vCPUs of one VM can differ (the host's load
 * on their cores), and the engine's figures move with its CPU. 0.0 when the
 * lcore cannot be launched.
 */
double perf_floor_icrc_gbps_on(unsigned int lcore, uint32_t payload);

/*
 * The kernel's UDP round trip over 127.0.0.1: the calling lcore sends 16
 * bytes, @peer_lcore echoes them (blocking sockets). Round-trip cycles into
 * @samples. Returns 0 or a negative errno.
 */
int perf_floor_udp_rtt(unsigned int peer_lcore, uint64_t *samples, size_t iters);

/*
 * sockperf ping-pong over 127.0.0.1 (server on @peer_cpu, client on @app_cpu,
 * 1 s, 16 B, --full-rtt): the median round trip in microseconds, or a
 * negative value when sockperf is not installed or failed.
 */
double perf_floor_sockperf_rtt_us(unsigned int app_cpu, unsigned int peer_cpu);

#endif
