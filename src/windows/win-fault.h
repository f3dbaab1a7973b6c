/* Test builds only (ward-test.exe, -DWARD_TEST_HOOKS=1): wrap the real
 * WinApi so that one step fails or lies the way a broken or partial Win32
 * does, to show under Wine that the executor refuses. Chosen by
 * WARD_TEST_WIN_FAULT:
 *   userenv-missing   profile_create: -ENOSYS, as when userenv.dll lacks
 *                     CreateAppContainerProfile
 *   attr-rejected     spawn: -EINVAL, as when UpdateProcThreadAttribute
 *                     rejects an attribute
 *   token-echo        token_read: reports the token spawn was asked for
 *                     (Wine hands out the unrestricted one): the runner's
 *                     plumbing past its token check
 *   token-lie         token_read: reports an unrestricted medium token
 *   acl-echo          get_sddl: a DACL set reads back as set (Wine keeps
 *                     none): the helper's plumbing past its read-back
 *   acl-lie           set_sddl: reports success, changes nothing
 *   job-lie           job_read: reports no kill-on-close
 *   job-echo          job_read: reports the limits ward asked for. Wine's
 *                     QueryInformationJobObject returns zeros, so the real
 *                     ward.exe refuses every run there (job-readback); the
 *                     plumbing tests use this to get past it and then check
 *                     kill-on-close by its effect (a grandchild dies)
 *   inject-fail       cow_inject: fails as a refused CreateRemoteThread
 *   ready-missing     cow_inject: ward waits on another pipe than the DLL
 *                     was told, so no readiness line comes (the DLL's
 *                     DllMain fails, its loader thread ends first)
 *   ready-timeout     cow_inject: no time for the readiness line (the
 *                     timeout path)
 *   wfp-echo          the network walls: a fake WFP engine that takes every
 *                     filter and reads it back as added (Wine has no
 *                     engine): the run's wall plumbing, then on to the
 *                     next step
 *   wfp-lie           the same engine reporting success for every add and
 *                     commit, then reading nothing back: the run refuses
 *                     at network-wall
 *   lb-echo           the loopback exemption list (Wine has no
 *                     firewallapi.dll): kept in memory, read back as set
 *   lb-lie            the same list reporting every set done and changing
 *                     nothing: the exemption does not read back
 *   profile-echo      profile_create: the SID the plan derived from the
 *                     profile's name (Wine's userenv lacks the call): with
 *                     acl-echo, token-echo and job-echo a W2 run's
 *                     plumbing reaches the child (Wine enforces none of it)
 *   spawn-plain       spawn: the child gets ward's own token (Wine rejects
 *                     the AppContainer attribute); token_read echoes the
 *                     asked one: with profile-echo, acl-echo and job-echo
 *                     a W2 run's plumbing (environment, proxy) reaches a
 *                     child that runs, unconfined
 *   wfp-setup         the wfp-echo engine holding, before the run, the
 *                     persistent filters ward-setup.exe makes for the
 *                     sandbox user of the run (the sandbox-user tier's
 *                     read-back)
 *   wfp-setup-port    with wfp-setup: the online user's proxy permits held
 *                     for another port (walls that differ from the plan)
 *   setup-echo        what ward-setup.exe leaves, where it cannot be made
 *                     (Wine): the credential record's DACL reads back as
 *                     setup sets it, DPAPI is the identity, the offline
 *                     and online users exist (WIN_FAULT_OFFLINE_SID,
 *                     WIN_FAULT_ONLINE_SID)
 *   logon-plain       (win32-user-run.c) the sandbox-user tier's runner
 *                     started with CreateProcessW as ward's own user (Wine
 *                     has no second user), ward-runner-test.exe, the
 *                     runner's user not checked: the tier's plumbing
 *                     (request, proxy, exit code) reaches a command that
 *                     runs unconfined
 *   cow-squat         (win32-inject.c) the readiness pipe's name taken before
 *                     ward creates it
 *   cow-intruder      (win32-inject.c) a client that is not the child
 *                     connects first and writes the child's readiness line
 *   helper-echo       helper_ask: the DACL change the helper answered "ok"
 *                     for reads back in ward-test.exe (Wine keeps no DACL;
 *                     the helper is another process); WARD_TEST_ACL_SEED=
 *                     "PATH|SDDL" is that path's DACL before (a grant a
 *                     killed run left)
 *   helper-declined   (win32-helper-client.c) the UAC prompt declined:
 *                     ShellExecuteExW fails with ERROR_CANCELLED
 *   helper-squat      (win32-helper-client.c) the helper's pipe name taken
 *                     by another process (ward-test.exe) before it starts
 * Several are given comma-separated ("job-echo,token-lie").
 * Portable: the wrapper only calls through the table. */
#pragma once

#include "windows/win-api.h"
#include "windows/win-net-api.h"
#include "windows/win-setup-api.h"

/* Replace entries of @api per @fault (NULL or "": no change). -EINVAL for
 * an unknown name. */
int win_fault_install(WinApi *api, const char *fault);
/* The wfp-* entries of @fault replace @api's WFP engine; the rest are
 * win_fault_install()'s. */
int win_fault_net_install(WinNetApi *api, const char *fault);
/* wfp-setup: the fake engine holds @p's filters from now on. */
void win_fault_net_seed(const char *fault, const WinWfpPlan *p);
/* Whether @name is one of @fault's comma-separated names. */
bool win_fault_listed(const char *fault, const char *name);
/* setup-echo: replace @api's record, DPAPI and user calls. */
#define WIN_FAULT_OFFLINE_SID "S-1-5-21-1-2-3-1005"
#define WIN_FAULT_ONLINE_SID "S-1-5-21-1-2-3-1006"
void win_fault_setup_install(WinSetupApi *api, const char *fault);
