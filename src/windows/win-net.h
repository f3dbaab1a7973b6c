/* Which network class a Windows run gets, and the AppContainer loopback
 * exemption list, as data. Pure.
 *
 * Classes (docs/windows.md "Network walls"):
 *   none     network.mode none: no capability; WFP blocks every connect,
 *            accept and raw socket of the identity.
 *   proxy    network.mode proxy: no capability; the identity is exempted
 *            from the AppContainer loopback block and WFP permits only TCP
 *            to the proxy's port on 127.0.0.1 / ::1.
 *   command  network.mode proxy and the program's base name is a
 *            `network.commands` key (git, ...): a package SID of its own
 *            that holds internetClient, the same proxy-only WFP walls on
 *            that SID, and the command's own allow list in the proxy.
 *            Capabilities are inherited by the whole process tree: what
 *            git starts (hooks, ssh, credential helpers) is in the class
 *            too. A program under a writable root never gets the class
 *            (the command could have planted it). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum WinNetClass {
	WIN_NET_NONE,
	WIN_NET_PROXY,
	WIN_NET_COMMAND,
	_WIN_NET_CLASS_MAX,
} WinNetClass;

typedef struct WinNetInput {
	bool proxy;                   /* network.mode proxy (else none) */
	char *const *commands;        /* network.commands keys (bare program names) */
	const char *application;      /* the resolved program (normalized) */
	char *const *writable;        /* normalized roots the command may write */
	uint16_t proxy_port;          /* the proxy's loopback port (proxy mode) */
} WinNetInput;

typedef struct WinNetDecision {
	WinNetClass cls;
	const char *capability;       /* "internetClient" or NULL */
	bool wfp;                     /* walls on the identity: always true */
	uint16_t proxy_port;          /* 0: the walls block everything */
	bool loopback_exempt;         /* needs the AppContainer loopback exemption */
	const char *command;          /* the matched network.commands key */
	char note[160];               /* why a command did not get its class */
} WinNetDecision;

const char *win_net_class_name(WinNetClass c);
/* -EINVAL (with the entry in @why) for a network.commands key that is not
 * a bare program name ([A-Za-z0-9._+-], no path, no wildcard); -EINVAL for
 * proxy mode without a port. */
int win_net_decide(const WinNetInput *in, WinNetDecision *ret, char *why, size_t n_why);

/* The loopback exemption list (NetworkIsolationGetAppContainerConfig's
 * SIDs). It is one machine-wide list that Set replaces whole, so ward reads
 * it, adds or removes only its own SIDs, and writes it back under its lock.
 * New strv in @ret; @sid compared case-insensitively; no duplicates. */
int win_loopback_with(char *const *list, const char *sid, char ***ret);
int win_loopback_without(char *const *list, char *const *sids, char ***ret);
