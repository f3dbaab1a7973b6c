/* GUID strings, name-based GUIDs and the WFP GUIDs mingw lacks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "windows/win-guid.h"
#include "windows/win-sha256.h"

#define G(a, b, c, d0, d1, d2, d3, d4, d5, d6, d7)                                                \
	{ a, b, c, { d0, d1, d2, d3, d4, d5, d6, d7 } }

const WinGuid WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V4 =
	G(0xc38d57d1, 0x05a7, 0x4c33, 0x90, 0x4f, 0x7f, 0xbc, 0xee, 0xe6, 0x0e, 0x82);
const WinGuid WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V6 =
	G(0x4a72393b, 0x319f, 0x44bc, 0x84, 0xc3, 0xba, 0x54, 0xdc, 0xb3, 0xb6, 0xb4);
const WinGuid WIN_FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V4 =
	G(0xe1cd9fe7, 0xf4b5, 0x4273, 0x96, 0xc0, 0x59, 0x2e, 0x48, 0x7b, 0x86, 0x50);
const WinGuid WIN_FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V6 =
	G(0xa3b42c97, 0x9f04, 0x4672, 0xb8, 0x7e, 0xce, 0xe9, 0xc4, 0x83, 0x25, 0x7f);
const WinGuid WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V4 =
	G(0x1247d66d, 0x0b60, 0x4a15, 0x8d, 0x44, 0x71, 0x55, 0xd0, 0xf5, 0x3a, 0x0c);
const WinGuid WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V6 =
	G(0x55a650e1, 0x5f0a, 0x4eca, 0xa6, 0x53, 0x88, 0xf5, 0x3b, 0x26, 0xaa, 0x8c);
const WinGuid WIN_FWPM_CONDITION_ALE_PACKAGE_ID =
	G(0x71bc78fa, 0xf17c, 0x4997, 0xa6, 0x02, 0x6a, 0xbb, 0x26, 0x1f, 0x35, 0x1c);
const WinGuid WIN_FWPM_CONDITION_ALE_USER_ID =
	G(0xaf043a0a, 0xb34d, 0x4f86, 0x97, 0x9c, 0xc9, 0x03, 0x71, 0xaf, 0x6e, 0x66);
const WinGuid WIN_FWPM_CONDITION_IP_REMOTE_ADDRESS =
	G(0xb235ae9a, 0x1d64, 0x49b8, 0xa4, 0x4c, 0x5f, 0xf3, 0xd9, 0x09, 0x50, 0x45);
const WinGuid WIN_FWPM_CONDITION_IP_REMOTE_PORT =
	G(0xc35a604d, 0xd22b, 0x4e1a, 0x91, 0xb4, 0x68, 0xf6, 0x74, 0xee, 0x67, 0x4b);
const WinGuid WIN_FWPM_CONDITION_IP_PROTOCOL =
	G(0x3971ef2b, 0x623e, 0x4f9a, 0x8c, 0xb1, 0x6e, 0x79, 0xb8, 0x06, 0xb9, 0xa7);

/* win_guid_from_name("wfp", "provider") and ("wfp", "sublayer"). */
const WinGuid WIN_WARD_WFP_PROVIDER =
	G(0x98d81c5c, 0x73d9, 0x86b8, 0x94, 0x83, 0x6b, 0x55, 0xc0, 0x23, 0x0d, 0xe7);
const WinGuid WIN_WARD_WFP_SUBLAYER =
	G(0x55256eba, 0x7245, 0x8de3, 0x9e, 0x7a, 0x58, 0x6b, 0x5d, 0x3b, 0xb2, 0xc7);

void win_guid_format(const WinGuid *g, char ret[WIN_GUID_STRING_MAX])
{
	snprintf(ret, WIN_GUID_STRING_MAX,
		 "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}", (unsigned)g->d1,
		 (unsigned)g->d2, (unsigned)g->d3, g->d4[0], g->d4[1], g->d4[2], g->d4[3],
		 g->d4[4], g->d4[5], g->d4[6], g->d4[7]);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int win_guid_parse(const char *s, WinGuid *ret)
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	uint8_t b[16];
	size_t nb = 0;
	const char *p = s;

	if (!s || strlen(s) != 38 || *p++ != '{' || s[37] != '}')
		return -EINVAL;
	for (size_t gi = 0; gi < 5; gi++) {
		if (gi > 0 && *p++ != '-')
			return -EINVAL;
		for (int i = 0; i < groups[gi]; i += 2) {
			int hi = hexval(p[0]), lo = hexval(p[1]);

			if (hi < 0 || lo < 0)
				return -EINVAL;
			b[nb++] = (uint8_t)(hi << 4 | lo);
			p += 2;
		}
	}
	ret->d1 = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	ret->d2 = (uint16_t)(b[4] << 8 | b[5]);
	ret->d3 = (uint16_t)(b[6] << 8 | b[7]);
	memcpy(ret->d4, b + 8, 8);
	return 0;
}

bool win_guid_equal(const WinGuid *a, const WinGuid *b)
{
	return a->d1 == b->d1 && a->d2 == b->d2 && a->d3 == b->d3 &&
	       memcmp(a->d4, b->d4, 8) == 0;
}

void win_guid_from_name(const char *ns, const char *name, WinGuid *ret)
{
	char buf[512];
	size_t n = 0, lns = strlen(ns), lname = strlen(name);
	uint8_t h[32];

	/* "ward" NUL ns NUL name; longer inputs are hashed in full. */
	if (5 + lns + 1 + lname <= sizeof(buf)) {
		memcpy(buf, "ward", 5);
		n = 5;
		memcpy(buf + n, ns, lns + 1);
		n += lns + 1;
		memcpy(buf + n, name, lname);
		n += lname;
		win_sha256(buf, n, h);
	} else {
		/* Names here are SIDs and filter names (< 200 bytes); a longer one
		 * is hashed first, keeping the key a function of the inputs. */
		uint8_t inner[32];

		win_sha256(name, lname, inner);
		memcpy(buf, "ward", 5);
		n = 5;
		lns = lns > 200 ? 200 : lns;
		memcpy(buf + n, ns, lns);
		n += lns;
		buf[n++] = 0;
		memcpy(buf + n, inner, 32);
		n += 32;
		win_sha256(buf, n, h);
	}
	h[6] = (uint8_t)((h[6] & 0x0f) | 0x80); /* version 8 */
	h[8] = (uint8_t)((h[8] & 0x3f) | 0x80); /* variant 10 */
	ret->d1 = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	ret->d2 = (uint16_t)(h[4] << 8 | h[5]);
	ret->d3 = (uint16_t)(h[6] << 8 | h[7]);
	memcpy(ret->d4, h + 8, 8);
}
