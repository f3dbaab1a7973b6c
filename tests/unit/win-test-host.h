/* A fake Windows host for the plan-layer tests: a list of paths that
 * exist, with their kinds, compared case-insensitively. */
#pragma once

#include <string.h>
#include <strings.h>

#include "windows/win-plan.h"

typedef struct FakeFile {
	const char *path;
	WinFileKind kind;
} FakeFile;

static const FakeFile fake_files[] = {
	{ "C:\\ws", WIN_FILE_DIRECTORY },
	{ "C:\\ws\\.git", WIN_FILE_DIRECTORY },
	{ "C:\\ws\\tool.exe", WIN_FILE_REGULAR },
	{ "C:\\ws\\run.bat", WIN_FILE_REGULAR },
	{ "C:\\ws\\script.ps1", WIN_FILE_REGULAR },
	{ "C:\\ws\\secrets", WIN_FILE_DIRECTORY },
	{ "C:\\Users\\me\\.gitconfig", WIN_FILE_REGULAR },
	{ "C:\\Users\\me\\cache", WIN_FILE_DIRECTORY },
	{ "C:\\Users\\me\\AppData\\Roaming\\ward", WIN_FILE_DIRECTORY },
	{ "C:\\Windows\\System32\\cmd.exe", WIN_FILE_REGULAR },
	{ "C:\\Windows\\System32\\where.exe", WIN_FILE_REGULAR },
	{ "C:\\Program Files\\Git\\cmd\\git.exe", WIN_FILE_REGULAR },
	{ "C:\\Program Files\\Git\\cmd\\git.cmd", WIN_FILE_REGULAR },
	{ "C:\\Program Files\\tools", WIN_FILE_DIRECTORY },
	{ "C:\\ws\\git.exe", WIN_FILE_REGULAR },
};

static inline WinFileKind fake_stat(void *userdata, const char *path)
{
	(void)userdata;
	for (size_t i = 0; i < sizeof(fake_files) / sizeof(*fake_files); i++)
		if (strcasecmp(fake_files[i].path, path) == 0)
			return fake_files[i].kind;
	return WIN_FILE_NONE;
}

static char *fake_system_dirs[] = { "C:\\Windows", "C:\\Program Files",
				    "C:\\Program Files (x86)", "C:\\ProgramData", NULL };

static const WinHost fake_host = {
	.stat = fake_stat,
	.comspec = "C:\\Windows\\System32\\cmd.exe",
	.system_dirs = fake_system_dirs,
};
