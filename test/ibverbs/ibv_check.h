/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_IBV_CHECK_H
#define DRNIC_IBV_CHECK_H

/*
 * The check line of our verbs test programs: "ok: what" or "FAIL: file:line:
 * what", counting failures (the program exits 1 when any).
 */
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			printf("ok: ");                                         \
		} else {                                                        \
			printf("FAIL: %s:%d: ", __FILE__, __LINE__);            \
			failures++;                                             \
		}                                                               \
		printf(__VA_ARGS__);                                            \
		printf("\n");                                                   \
	} while (0)

#endif
