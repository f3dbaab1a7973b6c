/* Windows plan layer: SID strings, SHA-256, and the AppContainer and
 * capability SID derivations against SIDs Windows publishes. Runs natively
 * and, cross-compiled, under Wine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "windows/win-sha256.h"
#include "windows/win-sid.h"

static void hex(const uint8_t *h, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

static void test_win_sha256_fips_vectors(void **state)
{
	uint8_t h[32];
	char s[65];
	char many[1000];

	win_sha256("abc", 3, h);
	hex(h, s);
	assert_string_equal(s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	win_sha256("", 0, h);
	hex(h, s);
	assert_string_equal(s, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* Two blocks of padding (56 bytes). */
	win_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h);
	hex(h, s);
	assert_string_equal(s, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(many, 'a', sizeof(many));
	win_sha256(many, sizeof(many), h);
	hex(h, s);
	assert_string_equal(s, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

static void test_win_sid_parse_format_roundtrip(void **state)
{
	static const char *const ok[] = {
		"S-1-1-0", "S-1-5-32-544", "S-1-5-21-1004336348-1177238915-682003330-512",
		"S-1-16-4096", "S-1-15-2-1", "S-1-0x123456789ABC-1",
		"S-1-5-4294967295", "S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15",
	};
	char buf[WIN_SID_STRING_MAX];
	WinSid sid;

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		assert_int_equal(win_sid_parse(ok[i], &sid), 0);
		win_sid_format(&sid, buf);
		assert_string_equal(buf, ok[i]);
	}
	/* An authority below 2^32 written in hex comes back in decimal. */
	assert_int_equal(win_sid_normalize("S-1-0x5-18", buf), 0);
	assert_string_equal(buf, "S-1-5-18");
}

static void test_win_sid_parse_rejects(void **state)
{
	static const char *const bad[] = {
		"", "S", "S-", "S-1", "S-1-", "S-2-5-18", "S-1-5-", "S-1-5--1", "S-1-5-18-",
		"S-1-5-4294967296",            /* sub-authority above 2^32-1 */
		"S-1-5-99999999999999999999",  /* overflow */
		"S-1-281474976710656-1",       /* authority above 2^48-1 */
		"S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16", /* 16 sub-authorities */
		"S-1-5-+18", "S-1-5- 18", "S-1-5-018", "S-1-5-18 ", "X-1-5-18", "SY", "S-1-5-0x12",
	};
	WinSid sid;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		print_message("# case %zu\n", i);
		assert_int_equal(win_sid_parse(bad[i], &sid), -EINVAL);
	}
}

static void test_win_sid_appcontainer_matches_published(void **state)
{
	WinSid sid;
	char buf[WIN_SID_STRING_MAX];

	/* Microsoft publishes the legacy Edge package's SID (loopback
	 * exemption docs); the derivation lower-cases the name first. */
	assert_int_equal(win_sid_appcontainer("Microsoft.MicrosoftEdge_8wekyb3d8bbwe", &sid), 0);
	win_sid_format(&sid, buf);
	assert_string_equal(buf, "S-1-15-2-3624051433-2125758914-1423191267-1740899205-"
				 "1073925389-3782572162-737981194");
	assert_int_equal(win_sid_appcontainer("microsoft.windowscommunicationsapps_8wekyb3d8bbwe",
					      &sid), 0);
	win_sid_format(&sid, buf);
	assert_string_equal(buf, "S-1-15-2-2551677095-2355568638-4209445997-2436930744-"
				 "3692183382-387691378-1866284433");
	assert_int_equal(win_sid_appcontainer("ward.run.0123456789abcdef", &sid), 0);
	assert_int_equal(sid.n_sub, 8);
	assert_int_equal(win_sid_appcontainer("", &sid), -EINVAL);
	assert_int_equal(win_sid_appcontainer("a b", &sid), -EINVAL);
	assert_int_equal(win_sid_appcontainer("a\\b", &sid), -EINVAL);
	assert_int_equal(win_sid_appcontainer(
				 "0123456789012345678901234567890123456789012345678901234567890123x",
				 &sid), -EINVAL);
}

static void test_win_sid_capability_matches_published(void **state)
{
	WinSid sid;
	char buf[WIN_SID_STRING_MAX];

	assert_int_equal(win_sid_capability("internetClient", &sid), 0);
	win_sid_format(&sid, buf);
	assert_string_equal(buf, "S-1-15-3-1");
	assert_int_equal(win_sid_capability("privateNetworkClientServer", &sid), 0);
	win_sid_format(&sid, buf);
	assert_string_equal(buf, "S-1-15-3-3");
	/* Name-derived capability SIDs as they appear in Windows's own ACLs. */
	assert_int_equal(win_sid_capability("registryRead", &sid), 0);
	win_sid_format(&sid, buf);
	assert_string_equal(buf, "S-1-15-3-1024-1065365936-1281604716-3511738428-1654721687-"
				 "432734479-3232135806-4053264122-3456934681");
	assert_int_equal(win_sid_capability("lpacSessionManagement", &sid), 0);
	win_sid_format(&sid, buf);
	assert_string_equal(buf, "S-1-15-3-1024-1864111754-776273317-3666925027-2523908081-"
				 "3792458206-3582472437-4114419977-1582884857");
	/* The derivation upper-cases: case does not change the SID. */
	assert_int_equal(win_sid_capability("REGISTRYREAD", &sid), 0);
	win_sid_format(&sid, buf);
	assert_string_equal(buf, "S-1-15-3-1024-1065365936-1281604716-3511738428-1654721687-"
				 "432734479-3232135806-4053264122-3456934681");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win_sha256_fips_vectors),
		cmocka_unit_test(test_win_sid_parse_format_roundtrip),
		cmocka_unit_test(test_win_sid_parse_rejects),
		cmocka_unit_test(test_win_sid_appcontainer_matches_published),
		cmocka_unit_test(test_win_sid_capability_matches_published),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
