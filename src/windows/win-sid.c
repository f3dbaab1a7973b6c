/* SID strings and the two name-to-SID derivations. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/macro.h"
#include "windows/win-sha256.h"
#include "windows/win-sid.h"

const char WIN_SID_EVERYONE[] = "S-1-1-0";
const char WIN_SID_ALL_APP_PACKAGES[] = "S-1-15-2-1";
const char WIN_SID_INTEGRITY_LOW[] = "S-1-16-4096";
const char WIN_SID_INTEGRITY_MEDIUM[] = "S-1-16-8192";
const char WIN_SID_LOGON_PLACEHOLDER[] = "LOGON";

/* A decimal (or, with @hex_ok, 0x-hex) number up to @max, ending at '-' or
 * NUL; advances *p. */
static int parse_num(const char **p, uint64_t max, bool hex_ok, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned base = 10;
	int digits = 0;

	if (hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++, digits++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (v > (max - d) / base)
			return -EINVAL;
		v = v * base + d;
	}
	if (digits == 0 || (*s != '-' && *s != '\0'))
		return -EINVAL;
	/* "007" is not how Windows writes a number; refuse rather than alias. */
	if (base == 10 && digits > 1 && **p == '0')
		return -EINVAL;
	*p = s;
	*ret = v;
	return 0;
}

int win_sid_parse(const char *s, WinSid *ret)
{
	WinSid sid = { .revision = 1 };
	uint64_t v;

	if (!s || (s[0] != 'S' && s[0] != 's') || s[1] != '-')
		return -EINVAL;
	s += 2;
	if (parse_num(&s, 255, false, &v) < 0 || v != 1 || *s != '-')
		return -EINVAL;
	s++;
	if (parse_num(&s, (UINT64_C(1) << 48) - 1, true, &sid.authority) < 0)
		return -EINVAL;
	while (*s == '-') {
		s++;
		if (sid.n_sub == WIN_SID_MAX_SUB)
			return -EINVAL;
		if (parse_num(&s, UINT32_MAX, false, &v) < 0)
			return -EINVAL;
		sid.sub[sid.n_sub++] = (uint32_t)v;
	}
	if (*s != '\0')
		return -EINVAL;
	*ret = sid;
	return 0;
}

void win_sid_format(const WinSid *sid, char ret[WIN_SID_STRING_MAX])
{
	size_t n;

	if (sid->authority < (UINT64_C(1) << 32))
		n = (size_t)snprintf(ret, WIN_SID_STRING_MAX, "S-%u-%" PRIu64, sid->revision,
				     sid->authority);
	else
		n = (size_t)snprintf(ret, WIN_SID_STRING_MAX, "S-%u-0x%012" PRIX64, sid->revision,
				     sid->authority);
	for (unsigned i = 0; i < sid->n_sub && n < WIN_SID_STRING_MAX; i++)
		n += (size_t)snprintf(ret + n, WIN_SID_STRING_MAX - n, "-%" PRIu32, sid->sub[i]);
}

bool win_sid_equal(const WinSid *a, const WinSid *b)
{
	return a->revision == b->revision && a->authority == b->authority &&
	       a->n_sub == b->n_sub && memcmp(a->sub, b->sub, a->n_sub * sizeof(uint32_t)) == 0;
}

int win_sid_normalize(const char *s, char ret[WIN_SID_STRING_MAX])
{
	WinSid sid;
	int r = win_sid_parse(s, &sid);

	if (r < 0)
		return r;
	win_sid_format(&sid, ret);
	return 0;
}

/* UTF-16LE of an ASCII name, case-mapped; -EINVAL outside [A-Za-z0-9._-]. */
static int name_utf16(const char *name, bool upper, uint8_t *buf, size_t max, size_t *ret_n)
{
	size_t n = strlen(name);

	if (n == 0 || n > max)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return -EINVAL;
		if (upper && c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (!upper && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		buf[2 * i] = (uint8_t)c;
		buf[2 * i + 1] = 0;
	}
	*ret_n = 2 * n;
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int win_sid_appcontainer(const char *name, WinSid *ret)
{
	uint8_t buf[128], h[32];
	size_t n;
	WinSid sid = { .revision = 1, .authority = 15, .n_sub = 8, .sub = { 2 } };

	if (name_utf16(name, false, buf, 64, &n) < 0)
		return -EINVAL;
	win_sha256(buf, n, h);
	for (int i = 0; i < 7; i++)
		sid.sub[1 + i] = le32(h + 4 * i);
	*ret = sid;
	return 0;
}

/* The capabilities with a well-known RID under S-1-15-3 (winnt.h
 * SECURITY_CAPABILITY_*), which DeriveCapabilitySidsFromName returns as is. */
static const struct {
	const char *name;
	uint32_t rid;
} known_caps[] = {
	{ "internetClient", 1 },
	{ "internetClientServer", 2 },
	{ "privateNetworkClientServer", 3 },
	{ "picturesLibrary", 4 },
	{ "videosLibrary", 5 },
	{ "musicLibrary", 6 },
	{ "documentsLibrary", 7 },
	{ "enterpriseAuthentication", 8 },
	{ "sharedUserCertificates", 9 },
	{ "removableStorage", 10 },
	{ "appointments", 11 },
	{ "contacts", 12 },
};

int win_sid_capability(const char *name, WinSid *ret)
{
	uint8_t buf[512], h[32];
	size_t n;
	WinSid sid = { .revision = 1, .authority = 15, .n_sub = 10, .sub = { 3, 1024 } };

	for (size_t i = 0; i < ELEMENTSOF(known_caps); i++)
		if (name && strcasecmp(name, known_caps[i].name) == 0) {
			*ret = (WinSid){ .revision = 1, .authority = 15, .n_sub = 2,
					 .sub = { 3, known_caps[i].rid } };
			return 0;
		}
	if (!name || name_utf16(name, true, buf, 256, &n) < 0)
		return -EINVAL;
	win_sha256(buf, n, h);
	for (int i = 0; i < 8; i++)
		sid.sub[2 + i] = le32(h + 4 * i);
	*ret = sid;
	return 0;
}
