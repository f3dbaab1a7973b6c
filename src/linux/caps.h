/* Drop every capability for good: the bounding and ambient sets, the
 * securebits that would give root its capabilities back on execve, then
 * the effective, permitted and inheritable sets. Child side, no allocation. */
#pragma once

int caps_drop_all(void);
