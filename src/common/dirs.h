/* Where ward keeps its config and state: XDG base directories for the
 * invoking user. Both are hidden from every sandbox. */
#pragma once

/* $XDG_CONFIG_HOME/ward or $HOME/.config/ward. Caller frees. */
int ward_config_dir(char **ret);
/* $XDG_STATE_HOME/ward or $HOME/.local/state/ward. Caller frees. */
int ward_state_dir(char **ret);
/* Make sure ward's own directory @path exists (mkdir -p, mode 0700) and is
 * a directory of the caller's: a sandbox masks only what exists, so ward's
 * config and state dirs are created before every run, and no run can make
 * them (or a policy in them) later. -ENOTDIR / -EPERM when @path is not a
 * directory or not the caller's. */
int ward_dir_ensure(const char *path);
/* mkdir -p with @mode for each created component. */
int mkdir_p(const char *path, unsigned mode);
/* The invoking user's home: $HOME if absolute, else the passwd entry. Caller frees. */
int ward_home_dir(char **ret);
