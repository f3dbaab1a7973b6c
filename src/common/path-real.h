/* realpath(3) for the many paths one run's planning resolves (denied
 * paths, grants, ward's own directories), most of which share their
 * leading components ("/etc" is looked up for every denied file in it).
 *
 * Between path_real_begin() and path_real_end() the answer for each
 * component (a symlink and its target, not one, or an error) is kept, so a
 * prefix is asked of the kernel once per run, not once per path (issue 11:
 * 135 of the 543 syscalls of a tier 1 /bin/true were these readlinks).
 * Outside that scope path_real() is realpath(3). The cache belongs to the
 * calling thread; answers are as fresh as the scope (one run's prepare
 * phase), and the paths are opened by what uses them afterwards, exactly
 * as with realpath's answer. */
#pragma once

/* Like realpath(path, NULL): a new canonical absolute path, or NULL with
 * errno set (ENOENT, ENOTDIR, EACCES, ELOOP, ENAMETOOLONG, ENOMEM). */
char *path_real(const char *path);

/* Start and end the calling thread's cache scope (nestable: the
 * outermost end drops the cache). */
void path_real_begin(void);
void path_real_end(void);
