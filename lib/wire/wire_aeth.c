/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AETH syndromes (IBA vol. 1, 9.7.5.1): credit count codes of ACKs, RNR NAK
 * timer codes, NAK codes.
 */
#include "drnic_wire.h"

/* RNR NAK timer codes in microseconds; code 0 is the longest wait. */
static const uint32_t wire_rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* Credit count codes 0..30; 31 means "invalid" (no credits advertised). */
static const uint16_t wire_credits[31] = {
	0, 1, 2, 3, 4, 6, 8, 12,
	16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072,
	4096, 6144, 8192, 12288, 16384, 24576, 32768,
};

static const char *const wire_nak_names[32] = {
	[DRNIC_NAK_PSN_SEQ_ERR] = "NAK_PSN_SEQ_ERR",
	[DRNIC_NAK_INVALID_REQ] = "NAK_INVALID_REQ",
	[DRNIC_NAK_REMOTE_ACCESS] = "NAK_REMOTE_ACCESS",
	[DRNIC_NAK_REMOTE_OP] = "NAK_REMOTE_OP",
	[DRNIC_NAK_INVALID_RD_REQ] = "NAK_INVALID_RD_REQ",
};

uint32_t
drnic_aeth_rnr_timer_us(uint8_t code)
{
	return wire_rnr_timer_us[code & 0x1F];
}

uint8_t
drnic_aeth_rnr_code(uint32_t us)
{
	uint8_t code;

	/* Codes 1..31 increase monotonically. */
	for (code = 1; code < 32; code++)
		if (wire_rnr_timer_us[code] >= us)
			return code;
	return 0;
}

int32_t
drnic_aeth_credits(uint8_t code)
{
	code &= 0x1F;
	if (code == DRNIC_AETH_CREDIT_INVALID)
		return -1;
	return wire_credits[code];
}

uint8_t
drnic_aeth_credit_code(uint32_t credits)
{
	uint8_t code = 0;

	while (code < 30 && wire_credits[code + 1] <= credits)
		code++;
	return code;
}

const char *
drnic_aeth_name(uint8_t syndrome)
{
	const char *name;

	switch (drnic_aeth_type(syndrome)) {
	case DRNIC_AETH_ACK:
		return "ACK";
	case DRNIC_AETH_RNR_NAK:
		return "RNR_NAK";
	case DRNIC_AETH_NAK:
		name = wire_nak_names[drnic_aeth_value(syndrome)];
		return name != NULL ? name : "NAK_RESERVED";
	default:
		return "RESERVED";
	}
}
