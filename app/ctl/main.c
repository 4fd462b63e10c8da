/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic-ctl: ask a running drnicd what it serves, as iproute2's `rdma
 * resource show` and `rdma statistic` ask the kernel.
 *
 *   drnic-ctl [-s SOCKET] [list]          devices, attached processes (pid,
 *                                         name, objects; their QPs and MRs)
 *                                         and the daemon's counters
 *   drnic-ctl [-s SOCKET] stats [DEVICE]  the engines' and links' counters
 *
 * SOCKET: -s, else $DRNIC_DAEMON, else /run/drnic/drnicd.sock. No EAL: it
 * only talks to the daemon. Exit status 0, or 1 with the reason on stderr
 * (no daemon there, unknown device).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rpc.h"

static int
ctl_call(const char *path, struct rpc_msg *m, char *text, size_t text_cap)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static char pkt[RPC_PACKET_MAX];
	struct rpc_msg *rep = (struct rpc_msg *)pkt;
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, m, sizeof(*m), MSG_NOSIGNAL) != (ssize_t)sizeof(*m)) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	n = recv(fd, pkt, sizeof(pkt), 0);
	close(fd);
	if (n < (ssize_t)sizeof(*rep) || rep->op != m->op ||
	    rep->text_len > (size_t)n - sizeof(*rep))
		return -EPROTO;
	if (rep->rc < 0)
		return rep->rc;
	if (rep->text_len >= text_cap)
		rep->text_len = (uint32_t)text_cap - 1;
	memcpy(text, pkt + sizeof(*rep), rep->text_len);
	text[rep->text_len] = '\0';
	return 0;
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-s SOCKET] [list | stats [DEVICE]]\n", prog);
}

int
main(int argc, char **argv)
{
	static char text[RPC_PACKET_MAX];
	const char *path = getenv("DRNIC_DAEMON");
	const char *cmd = "list";
	struct rpc_msg m;
	int c, rc;

	while ((c = getopt(argc, argv, "s:h")) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		default:
			usage(argv[0]);
			return 1;
		}
	}
	if (path == NULL || path[0] == '\0')
		path = RPC_DEFAULT_SOCKET;
	if (optind < argc)
		cmd = argv[optind++];
	if (strcmp(cmd, "list") == 0 && optind == argc) {
		rpc_msg_init(&m, RPC_CTL_LIST);
	} else if (strcmp(cmd, "stats") == 0 && optind + 1 >= argc) {
		const char *dev = optind < argc ? argv[optind] : "";

		rpc_msg_init(&m, RPC_CTL_STATS);
		if (strlen(dev) >= RPC_BLOB_MAX) {
			fprintf(stderr, "drnic-ctl: device name too long\n");
			return 1;
		}
		memcpy(m.blob, dev, strlen(dev) + 1);
		m.blob_len = (uint32_t)strlen(dev) + 1;
	} else {
		usage(argv[0]);
		return 1;
	}
	rc = ctl_call(path, &m, text, sizeof(text));
	if (rc < 0) {
		if (rc == -ENODEV)
			fprintf(stderr, "drnic-ctl: no such device: %s\n", (const char *)m.blob);
		else
			fprintf(stderr, "drnic-ctl: %s: %s\n", path, strerror(-rc));
		return 1;
	}
	fputs(text, stdout);
	return 0;
}
