/* SPDX-License-Identifier: BSD-3-Clause */
/* A client of this process's DPDK telemetry socket (tel_client.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <rte_eal.h>

#include "tel_client.h"

int
tel_client_connect(char *path, size_t len)
{
	const char *dir = rte_eal_get_runtime_dir();
	char hello[1024], want[32];
	int i;

	snprintf(want, sizeof(want), "\"pid\":%d,", (int)getpid());
	for (i = 0; i < 64; i++) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		ssize_t n;
		int fd;

		if (i == 0)
			snprintf(path, len, "%s/dpdk_telemetry.v2", dir);
		else
			snprintf(path, len, "%s/dpdk_telemetry.v2:%d", dir, i);
		if (strlen(path) >= sizeof(sun.sun_path))
			return -1;
		memcpy(sun.sun_path, path, strlen(path) + 1);
		fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
			close(fd);
			continue;
		}
		n = read(fd, hello, sizeof(hello) - 1);
		if (n > 0) {
			hello[n] = '\0';
			if (strstr(hello, want) != NULL)
				return fd;
		}
		close(fd);
	}
	return -1;
}

int
tel_client_query(int fd, const char *cmd, char *buf, size_t len)
{
	ssize_t n;

	if (write(fd, cmd, strlen(cmd)) < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	printf("  %s -> %.300s%s\n", cmd, buf, n > 300 ? "..." : "");
	return 0;
}

long long
tel_client_num(const char *json, const char *from, const char *key)
{
	char k[96];
	const char *p = from != NULL ? strstr(json, from) : json;

	if (p == NULL)
		return -1;
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(p, k);
	return p == NULL ? -1 : strtoll(p + strlen(k), NULL, 10);
}
