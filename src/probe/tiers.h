/* One table of every tier's guarantees: for T0, T1, T2 and T3, each guarantee
 * (reads confined, ..., resource limits) held, held partly (how) or not
 * held. The same data feeds docs/tiers.md (`ward probe --table` prints it;
 * a test compares the two), `ward probe` (the facts for this host's tier
 * and Landlock ABI) and every start event and --result (what the run's
 * tier does not hold). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum TierHold {
	TIER_HELD,
	TIER_PARTLY,
	TIER_NOT_HELD,
	_TIER_HOLD_MAX,
	_TIER_HOLD_INVALID = -22,
} TierHold;

const char *tier_hold_to_string(TierHold h); /* "held", "partly", "not held" */

typedef struct TierFact {
	const char *id;    /* stable: "reads", "writes", ... */
	const char *name;  /* "reads confined" */
	TierHold hold;
	const char *how;   /* one sentence */
} TierFact;

/* How many guarantees the table has. */
size_t tier_guarantees(void);

/* The fact for guarantee @i (< tier_guarantees()) at @tier (0..3) on a
 * kernel with Landlock ABI @abi (0: none). -EINVAL for a bad index or tier. */
int tier_fact(int tier, int abi, size_t i, TierFact *ret);

/* The table as Markdown, ABI-independent (a T1 cell names the ABI its
 * answer depends on), as in docs/tiers.md. Caller frees. */
char *tier_table_markdown(void);

/* The ids of the guarantees @tier holds as @which (TIER_NOT_HELD for the
 * start event's "not_held", TIER_PARTLY for "partly_held"). Caller frees. */
struct cJSON;
struct cJSON *tier_gaps_json(int tier, int abi, TierHold which);

/* ward.exe's tiers ("W0", "W1", "W1-write", "W2"), a table of their own
 * (the guarantees Windows can speak of, with the same ids), each row with
 * what of it is verified (docs/windows.md). The same shapes as above;
 * @ret_verified may be NULL. */
size_t tier_windows_guarantees(void);
int tier_windows_fact(const char *tier, size_t i, TierFact *ret, const char **ret_verified);
char *tier_windows_table_markdown(void);
struct cJSON *tier_windows_gaps_json(const char *tier, TierHold which);
