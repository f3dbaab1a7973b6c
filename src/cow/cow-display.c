/* Terminal-safe display of bytes the sandboxed command wrote (file contents,
 * symlink targets). Everything a person reads is printed through here or
 * through cow_quote_path(), so that nothing from the layer reaches a
 * terminal as a control sequence: C0 and C1 controls (ESC, CSI 0x9b, CR,
 * backspace, ...), DEL, bytes that are not UTF-8, and the characters that
 * reorder or hide text (bidi overrides, zero-width characters) are shown as
 * visible escapes. Tab is the one control left as it is. */
#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "cow/cow-review.h"

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
