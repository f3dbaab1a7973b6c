/* Paths ward acts on for the user on the host (the workspace it mounts
 * writable, the --result file it writes), resolved so that nothing a
 * sandboxed command could have planted redirects them: each component is
 * opened with O_PATH|O_NOFOLLOW, and a symlink is followed only when only
 * the system could have made it. Not a general path library (path-util.h
 * is the lexical one). */
#pragma once

#include <stdbool.h>

/* Is @path (canonical, absolute) a system directory: "/", /etc, /usr, /bin,
 * /sbin, /lib*, /boot, /dev, /proc, /sys, /run or anything beneath them, or
 * exactly /var, /var/lib, /var/tmp, /home, /opt, /srv, /mnt, /media, /tmp,
 * /root and a few more tops where every user's files meet. */
bool path_is_system_dir(const char *path);

/* Resolve the absolute @path component by component. A symlink is followed
 * only if it is owned by root and sits in a root-owned directory that no
 * group or other may write (and, when ward runs as root, in a system
 * directory: a root-run sandbox owns everything else it could write). On
 * success returns an O_PATH|O_CLOEXEC fd of the result and, in
 * @ret_real, its canonical path (caller frees; may be NULL). A symlink that
 * is not trusted gives -ELOOP with @reterr_link (the link, canonical
 * parent) and @reterr_target (what it points to) set (caller frees). */
int path_open_trusted(const char *path, char **ret_real, char **reterr_link,
		      char **reterr_target);

/* Write @len bytes of @data to @path as a new regular file, replacing it
 * atomically: the parent is resolved with path_open_trusted(), the data go
 * to a temporary file in the same directory (O_EXCL, O_NOFOLLOW, @mode)
 * which is then renamed over @path. An existing @path that is not a regular
 * file (a symlink, a FIFO, a directory) is refused with -ELOOP / -EINVAL
 * rather than replaced or followed. Errors as path_open_trusted(). */
int write_file_safe(const char *path, const char *data, size_t len, unsigned mode,
		    char **reterr_link, char **reterr_target);
