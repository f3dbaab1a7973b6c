/* The backend table: one entry per tier (run/backend.h). A tier that is
 * not built here has an entry whose probe refuses, so that the run module
 * never special-cases a tier. */
#include <errno.h>
#include <stddef.h>

#include "common/macro.h"
#include "run/backend.h"

extern const Backend backend_tier0;
extern const Backend backend_linux_t2;

static int unbuilt_probe(int tier, WardError *reterr)
{
	return ward_error_set(reterr, "tier", EOPNOTSUPP,
			      "Tier %d is not built yet; use --tier 2 (the default) or --tier 0 (no "
			      "isolation)",
			      tier);
}

static int t1_probe(WardError *reterr)
{
	return unbuilt_probe(1, reterr);
}

static int t3_probe(WardError *reterr)
{
	return unbuilt_probe(3, reterr);
}

static const Backend backend_t1_unbuilt = { .tier = 1, .name = "unbuilt", .probe = t1_probe };
static const Backend backend_t3_unbuilt = { .tier = 3, .name = "unbuilt", .probe = t3_probe };

static const Backend *const backends[] = {
	[0] = &backend_tier0,
	[1] = &backend_t1_unbuilt,
	[2] = &backend_linux_t2,
	[3] = &backend_t3_unbuilt,
};

const Backend *backend_for_tier(int tier)
{
	if (tier < 0 || (size_t)tier >= ELEMENTSOF(backends))
		return NULL;
	return backends[tier];
}
