/*
 * provider.c — which provider a call uses (llm.h, struct zc_llm): the
 * explicit one, config.json's, or the fallback. LLM layer: it reads the
 * memory handle's config file (borrowed) and never touches memories; the
 * facade hands the chosen provider to the tools layer per call.
 */
#include "llm/llm.h"

#include <string.h>

#include "base/alloc.h"

/* config.json's provider: the settings in effect at the moment of the
 * call, one request through zc_llm_complete. */
static int config_complete(void *ud, const char *system, const char *user, char **reply,
			   char **errmsg)
{
	struct zc_llm *l = ud;
	struct zc_err e = {0};
	zc_config_refresh(l->conf);
	struct zc_provider_config cfg = l->conf->cfg.provider;
	int rc = zc_llm_complete(&cfg, system, user, reply, &e);
	if (rc)
		*errmsg = zc_strdup(e.msg);
	return rc;
}

void zc_llm_open(struct zc_llm *l, struct zc_confile *conf)
{
	memset(l, 0, sizeof(*l));
	l->conf = conf;
	l->from_config.complete = config_complete;
	l->from_config.ud = l;
}

void zc_llm_close(struct zc_llm *l)
{
	if (l)
		memset(l, 0, sizeof(*l));
}

void zc_llm_set_provider(struct zc_llm *l, const struct zcor_provider *p)
{
	l->has_explicit = p && p->complete;
	if (l->has_explicit)
		l->explicit_p = *p;
}

void zc_llm_set_fallback(struct zc_llm *l, const struct zcor_provider *p)
{
	l->has_fallback = p && p->complete;
	if (l->has_fallback)
		l->fallback = *p;
}

const struct zcor_provider *zc_llm_provider(struct zc_llm *l)
{
	if (l->has_explicit)
		return &l->explicit_p;
	zc_config_refresh(l->conf);
	if (l->conf->cfg.provider.enabled)
		return &l->from_config;
	return l->has_fallback ? &l->fallback : NULL;
}
