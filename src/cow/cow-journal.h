/* The apply/undo journal and the records it becomes. An operation writes
 * <session>/journal.jsonl while it runs, one JSON line per step, fsync'd
 * before the step touches the workspace; on commit the journal is renamed to
 * ops/<seq>.jsonl, which then serves as the undo record (apply) and as the
 * conflict baseline (every step's resulting inode and ctime). Backups of
 * replaced or removed entries live in ops/<seq>.d/<step>.
 *
 * Line kinds: header {"type":"apply"|"undo","seq":N[,"nonce":..][,"of":M,"plan":[..]]},
 * apply step {"i":n,"op":..,"p":hexpath,"m":mode,"ot":"n|f|l|d","om":mode},
 * undo step {"u":n}, result {"d":n,"p":hexpath,"t":..,"dev","ino","ct","m","sz"},
 * failure {"f":n,"e":errno}, {"rollback":true}, {"commit":true}. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cow/cow-internal.h"

typedef enum CowOpType {
	COW_OP_PUT,    /* file or symlink from upper replaces a non-directory (or nothing) */
	COW_OP_MKDIR,  /* new directory where nothing is */
	COW_OP_UNLINK, /* remove a file or symlink */
	COW_OP_RMDIR,  /* remove an empty directory */
	COW_OP_CHMOD,  /* permission bits only */
	_COW_OP_MAX,
	_COW_OP_INVALID = -22,
} CowOpType;

const char *cow_op_to_string(CowOpType t);
CowOpType cow_op_from_string(const char *s);

typedef struct CowOp {
	CowOpType type;
	char *path;
	mode_t mode;      /* PUT/MKDIR/CHMOD: the new permission bits */
	char old_type;    /* 'n' none, 'f' file, 'l' symlink, 'd' directory */
	mode_t old_mode;
	bool begun;       /* a step line exists */
	bool done;        /* a result line exists (apply) */
	int error;        /* failure line */
	struct stat new_st;
	bool new_absent;
} CowOp;

typedef struct CowRecord {
	int seq;
	char nonce[17];   /* apply: random part of its temporary file names */
	bool is_undo;
	int of;           /* undo: the apply's seq */
	int *plan;        /* undo: apply step numbers, in order */
	size_t n_plan;
	CowOp *ops;       /* apply: indexed by step number */
	size_t n_ops;
	bool rolled_back;
	bool committed;
	bool *restored;   /* rollback/undo: step numbers with a result line */
	size_t n_restored;
} CowRecord;

void cow_record_done(CowRecord *r);
/* Parse journal text; an unterminated last line (a crash mid-write) is ignored. */
int cow_record_parse(const char *text, CowRecord *ret);
int cow_record_load(int session_dfd, int seq, CowRecord *ret);
/* The stat fields of a result line into @op->new_st / new_absent. */
void cow_record_parse_stat(const cJSON *line, CowOp *op);

typedef struct CowJournal {
	int fd;
	int session_dfd;
	int seq;
	char nonce[17]; /* apply: put in the header as "nonce" by the caller */
} CowJournal;

/* The next free record number (1 + the largest in ops/). */
int cow_next_seq(int session_dfd);
/* Create journal.jsonl with @header (taken), fsync'd with its directory. */
int cow_journal_begin(int session_dfd, int seq, cJSON *header, CowJournal *ret);
/* Append one line (@line is taken); fdatasync when @sync. */
int cow_journal_append(CowJournal *j, cJSON *line, bool sync);
/* Result line for @path after step @i (stat taken beneath @ws_fd). */
int cow_journal_result(CowJournal *j, int ws_fd, int i, const char *path);
/* Write the commit line and move the journal to ops/<seq>.jsonl. */
int cow_journal_commit(CowJournal *j);
void cow_journal_close(CowJournal *j);

/* Temporary names beside the target for apply (restore=false) and
 * undo/rollback (restore=true) of step @i of the apply with @nonce. The
 * nonce is random and kept in the state dir, so the sandbox cannot plant a
 * file under a name apply or recovery will create or remove. */
void cow_tmp_name(char *buf, size_t size, const char *nonce, int i, bool restore);

/* Put back what step @op of the apply with @nonce replaced or removed. Idempotent:
 * run it again after a crash and it reaches the same state. */
int cow_restore_op(int ws_fd, int backup_dfd, const char *nonce, int i, const CowOp *op);

/* The conflict baseline: the state each path was left in by this session's
 * own applies/undos. */
typedef struct CowBaselineEntry {
	char *path;
	char type; /* 'n', 'f', 'l', 'd' */
	dev_t dev;
	ino_t ino;
	int64_t ctime_ns;
	off_t size;
	size_t order; /* position in the records: larger is newer */
} CowBaselineEntry;

typedef struct CowBaseline {
	CowBaselineEntry *items;
	size_t n;
} CowBaseline;

int cow_baseline_load(int session_dfd, CowBaseline *ret);
const CowBaselineEntry *cow_baseline_find(const CowBaseline *b, const char *path);
void cow_baseline_done(CowBaseline *b);

char cow_type_char(mode_t m);
int64_t cow_ctime_ns(const struct stat *st);
