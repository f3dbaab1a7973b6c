/* See arpa/inet.h beside this file. */
#pragma once

#include <arpa/inet.h>
