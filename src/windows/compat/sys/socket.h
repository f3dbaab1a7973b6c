/* struct sockaddr and friends for the shared network matcher: Winsock.
 * Windows build only (see ../arpa/inet.h). */
#pragma once

#include <arpa/inet.h>
