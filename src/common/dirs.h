/* Where ward keeps its config and state: XDG base directories for the
 * invoking user. Both are hidden from every sandbox. */
#pragma once

/* $XDG_CONFIG_HOME/ward or $HOME/.config/ward. Caller frees. */
int ward_config_dir(char **ret);
/* $XDG_STATE_HOME/ward or $HOME/.local/state/ward. Caller frees. */
int ward_state_dir(char **ret);
/* mkdir -p with @mode for each created component. */
int mkdir_p(const char *path, unsigned mode);
/* The invoking user's home: $HOME if absolute, else the passwd entry. Caller frees. */
int ward_home_dir(char **ret);
