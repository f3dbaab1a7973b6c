/* Strict UTF-8 decoding, the one decoder every check on bytes from the
 * sandbox (file names, file contents shown to a person) goes through. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the valid UTF-8 sequence at @s, which has @left > 0
 * bytes, and its code point in *@ret_cp; 0 if invalid (overlong form,
 * surrogate, beyond U+10FFFF, bad continuation byte, truncated), and then
 * *@ret_cp is left as it was. */
size_t utf8_decode(const unsigned char *s, size_t left, uint32_t *ret_cp);
