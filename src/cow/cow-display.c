/* Terminal-safe display of bytes the sandboxed command wrote (file contents,
 * symlink targets). Everything a person reads is printed through here or
 * through cow_quote_path(), so that nothing from the layer reaches a
 * terminal as a control sequence: C0 and C1 controls (ESC, CSI 0x9b, CR,
 * backspace, ...), DEL, bytes that are not UTF-8, and the characters that
 * reorder or hide text (bidi overrides, zero-width characters) are shown as
 * visible escapes. Tab is the one control left as it is. */
#include <stdio.h>
#include <string.h>

#include "cow/cow-review.h"

/* Length of the valid UTF-8 sequence at @s and its code point; 0 if
 * invalid (overlong, surrogate, out of range, truncated). */
static size_t utf8_decode(const unsigned char *s, size_t left, uint32_t *ret_cp)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret_cp = cp;
	return n;
}

size_t cow_put_escaped(FILE *f, const char *str, size_t len, const char *on, const char *off)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t escaped = 0, run = 0;

	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = utf8_decode(s + i, len - i, &cp);
		bool bad = n == 0 || (cp < 0x20 && cp != '\t') || cp == 0x7f ||
			   cow_codepoint_is_deceptive(cp);

		if (!bad) {
			i += n;
			run += n;
			continue;
		}
		fwrite(s + i - run, 1, run, f);
		run = 0;
		fputs(on, f);
		if (n == 0)
			fprintf(f, "\\x%02x", s[i]);
		else if (cp == '\r')
			fputs("\\r", f);
		else if (cp < 0x80)
			fprintf(f, "\\x%02x", (unsigned)cp);
		else
			fprintf(f, "\\u%04x", (unsigned)cp);
		fputs(off, f);
		escaped++;
		i += n ? n : 1;
	}
	fwrite(s + len - run, 1, run, f);
	return escaped;
}

bool cow_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_decode(s + i, len - i, &cp);
		if (n == 0 || cp == 0)
			return false;
		i += n;
	}
	return true;
}
