/* The subcommands. Each takes argv starting at its own name (argv[0] is
 * "run", "probe", ...) and returns the process exit code. */
#pragma once

int cmd_run(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_setup(int argc, char **argv);   /* ward setup apparmor */
int setup_vm(int argc, char **argv);    /* ward setup vm (cmd-setup-vm.c) */
int cmd_policy(int argc, char **argv);
int cmd_session(int argc, char **argv);   /* ward session new ... */
int cmd_sessions(int argc, char **argv);  /* ward sessions */
int cmd_diff(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_undo(int argc, char **argv);
int cmd_discard(int argc, char **argv);
int cmd_log(int argc, char **argv);       /* ward log */
int cmd_mcp(int argc, char **argv);
int cmd_exec(int argc, char **argv);      /* ward exec ID -- CMD: in a live session */       /* ward mcp: an MCP server on stdio */
