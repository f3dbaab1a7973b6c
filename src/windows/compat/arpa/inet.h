/* inet_pton/inet_ntop and the address structures, from Winsock (ws2_32),
 * for the shared policy validator and network matcher. Windows build only. */
#pragma once

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <winsock2.h>
#include <ws2tcpip.h>
