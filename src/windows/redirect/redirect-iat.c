/* Import-table patching: every loaded module's import address table slot
 * that holds ntdll's entry point gets the hook instead. ntdll itself is
 * not touched (its code stays intact: the originals are called through
 * the addresses GetProcAddress gave), and nothing is copied or
 * disassembled. Runs in DllMain, under the loader lock, so the module
 * list cannot change meanwhile. A module loaded later is not patched:
 * its writes meet the workspace's read-only ACL (docs/windows.md). */
#include <windows.h>
#include <winternl.h>

#include "windows/redirect/redirect.h"

static unsigned patch_module(BYTE *base, void *orig, void *hook)
{
	IMAGE_DOS_HEADER *dos = (IMAGE_DOS_HEADER *)base;
	IMAGE_NT_HEADERS *nt;
	IMAGE_DATA_DIRECTORY dir;
	IMAGE_IMPORT_DESCRIPTOR *imp;
	unsigned n = 0;

	if (dos->e_magic != IMAGE_DOS_SIGNATURE)
		return 0;
	nt = (IMAGE_NT_HEADERS *)(base + dos->e_lfanew);
	if (nt->Signature != IMAGE_NT_SIGNATURE ||
	    nt->OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_IMPORT)
		return 0;
	dir = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
	if (!dir.VirtualAddress || !dir.Size)
		return 0;
	for (imp = (IMAGE_IMPORT_DESCRIPTOR *)(base + dir.VirtualAddress); imp->Name; imp++) {
		IMAGE_THUNK_DATA *t = (IMAGE_THUNK_DATA *)(base + imp->FirstThunk);

		for (; t->u1.Function; t++) {
			DWORD old;

			if ((void *)(ULONG_PTR)t->u1.Function != orig)
				continue;
			if (!VirtualProtect(&t->u1.Function, sizeof(t->u1.Function), PAGE_READWRITE,
					    &old))
				continue;
			t->u1.Function = (ULONG_PTR)hook;
			VirtualProtect(&t->u1.Function, sizeof(t->u1.Function), old, &old);
			n++;
		}
	}
	return n;
}

/* gcc sees the %gs:0x30 read behind NtCurrentTeb() as an access to a
 * zero-length array. */
static PEB *current_peb(void)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
	return NtCurrentTeb()->ProcessEnvironmentBlock;
#pragma GCC diagnostic pop
}

unsigned redirect_iat_patch(HMODULE self, void *orig, void *hook)
{
	PEB *peb = current_peb();
	LIST_ENTRY *head = &peb->Ldr->InMemoryOrderModuleList, *e;
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	unsigned n = 0;

	for (e = head->Flink; e != head; e = e->Flink) {
		LDR_DATA_TABLE_ENTRY *m = CONTAINING_RECORD(e, LDR_DATA_TABLE_ENTRY, InMemoryOrderLinks);

		if (!m->DllBase || m->DllBase == (void *)self || m->DllBase == (void *)ntdll)
			continue;
		n += patch_module(m->DllBase, orig, hook);
	}
	return n;
}
