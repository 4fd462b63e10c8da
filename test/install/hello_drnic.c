/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A user's program built only from the installed headers and drnic.pc:
 * starts the EAL, opens the embedded default device with inline progress,
 * and prints its port and first GID.
 */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include <drnic_env.h>
#include <drnic_verbs.h>
#include <drnic_wire.h>

int
main(void)
{
	struct drnic_config cfg;
	struct drnic_port_attr port;
	struct drnic_device *dev;
	union drnic_gid gid;
	int rc;

	rc = drnic_env_init(NULL, NULL);
	if (rc < 0) {
		fprintf(stderr, "hello_drnic: EAL: %s\n", strerror(-rc));
		return 1;
	}
	drnic_config_init(&cfg);
	drnic_config_set(&cfg, "progress", "inline");
	dev = drnic_device_open(&cfg);
	if (dev == NULL) {
		fprintf(stderr, "hello_drnic: device: %s\n", strerror(rte_errno));
		return 1;
	}
	if (drnic_query_port(dev, 1, &port) != 0 || drnic_query_gid(dev, 1, 0, &gid) != 0)
		return 1;
	printf("%s: port 1 state %d mtu %d gid0 %02x%02x::ffff:%u.%u.%u.%u; ICRC port %u\n",
	       drnic_device_name(dev), (int)port.state, (int)port.active_mtu,
	       gid.raw[0], gid.raw[1], gid.raw[12], gid.raw[13], gid.raw[14], gid.raw[15],
	       DRNIC_ROCEV2_UDP_PORT);
	drnic_device_close(dev);
	drnic_env_fini();
	return 0;
}
