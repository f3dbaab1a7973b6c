/* Command lines for CreateProcessW. Windows passes one string; each
 * program splits it itself, almost always with the rules of the Microsoft
 * C runtime (CommandLineToArgvW). win_cmdline_quote() writes a string that
 * those rules split back into exactly the argv given; win_cmdline_split()
 * is those rules, for the round-trip tests. Batch files are run by cmd.exe,
 * which reads % and ! and " itself whatever the quoting (the "BatBadBut"
 * class, CVE-2024-24576): their arguments are refused, not escaped, when
 * they hold characters cmd.exe would interpret. */
#pragma once

#include <stdbool.h>

/* @argv[0] is written as the program name (quoted, never escaped: a
 * program path cannot hold '"'; -EINVAL if it does), the rest quoted where
 * needed. New string in @ret. */
int win_cmdline_quote(char *const *argv, char **ret);
/* Split @cmdline with the C runtime's rules (first argument: up to the next
 * space or, when quoted, the closing quote; others: 2n backslashes + '"'
 * -> n and a quote toggle, 2n+1 + '"' -> n and a literal '"', "" inside
 * quotes -> '"'). New strv in @ret. */
int win_cmdline_split(const char *cmdline, char ***ret);
/* The command line for running batch file @script (absolute) with
 * arguments @args through @comspec: "cmd.exe /d /e:on /v:off /s /c
 * ""SCRIPT" "ARG"..."" with every argument quoted. -EINVAL (and a reason
 * in @why) when @script or an argument holds '"', '%', '!', or a control
 * character. */
int win_cmdline_batch(const char *comspec, const char *script, char *const *args, char **ret,
		      char *why, size_t n_why);
