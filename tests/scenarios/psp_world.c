/* SPDX-License-Identifier: MIT */
/** @file psp_world.c Encrypted scenario worlds (see psp_world.h). */
#include <string.h>

#include "psp_world.h"

/** associate() - @from learns (SPI, key) of @to: @to issues them, @from installs them. */
static int associate(struct psp_world *pw, int from, int to)
{
	homa_addr dst = homa_sim_host_addr(to);
	uint8_t key[HOMA_PSP_MAX_KEY_LEN];
	uint32_t spi;
	int rc = homa_psp_rx_issue(pw->psp[to], &spi, key);

	if (!rc)
		rc = homa_psp_tx_add(pw->psp[from], &dst, WORLD_PORT, spi, key, pw->version);
	return rc;
}

/** psp_world_init() - See psp_world.h. */
int psp_world_init(struct psp_world *pw, struct world *w, int version)
{
	int n = w->o.nhosts, rc = 0;

	memset(pw, 0, sizeof(*pw));
	pw->w = w;
	pw->version = version;
	for (int i = 0; !rc && i < n; i++) {
		rc = homa_psp_new(&pw->psp[i], version, NULL);
		if (rc)
			break;
		pw->hooks[i] = homa_psp_hooks(pw->psp[i]);
		homa_engine_set_hooks(world_engine(w, i), &pw->hooks[i]);
	}
	for (int from = 0; !rc && from < n; from++)
		for (int to = 0; !rc && to < n; to++)
			if (from != to)
				rc = associate(pw, from, to);
	return rc;
}

/** psp_world_free() - See psp_world.h. */
void psp_world_free(struct psp_world *pw)
{
	for (int i = 0; i < WORLD_MAX_HOSTS; i++)
		homa_psp_free(pw->psp[i]);
	memset(pw, 0, sizeof(*pw));
}

/** psp_world_rotate() - See psp_world.h. */
int psp_world_rotate(struct psp_world *pw, int h)
{
	int rc = homa_psp_rx_rotate(pw->psp[h], NULL);

	for (int from = 0; !rc && from < pw->w->o.nhosts; from++)
		if (from != h)
			rc = associate(pw, from, h);
	pw->rotations++;
	return rc;
}

/** rotate_event() - Event: rotate host (uintptr_t)@ptr of world @obj. */
static void rotate_event(void *obj, void *ptr, uint64_t now)
{
	struct psp_world *pw = obj;

	(void)now;
	if (psp_world_rotate(pw, (int)(uintptr_t)ptr))
		pw->rotate_errors++;
}

/** psp_world_rotate_at() - See psp_world.h. */
int psp_world_rotate_at(struct psp_world *pw, uint64_t t, int h)
{
	return homa_sim_schedule(pw->w->net, t, rotate_event, pw, (void *)(uintptr_t)h);
}

/** psp_world_add_attacker() - See psp_world.h. */
int psp_world_add_attacker(struct psp_world *pw, const struct homa_sim_psp_hostile_cfg *cfg,
			   struct homa_sim_psp_hostile **out)
{
	int id = homa_sim_psp_hostile_add(pw->w->net, cfg, out);

	return id < 0 ? id : world_link(pw->w, id);
}

/** psp_world_rejected() - See psp_world.h. */
void psp_world_rejected(const struct psp_world *pw, uint64_t out[HOMA_PSP_REJ_REASONS])
{
	struct homa_psp_stats st;

	memset(out, 0, sizeof(uint64_t) * HOMA_PSP_REJ_REASONS);
	for (int i = 0; i < WORLD_MAX_HOSTS; i++) {
		if (!pw->psp[i])
			continue;
		homa_psp_get_stats(pw->psp[i], &st);
		for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++)
			out[r] += st.rejected[r];
	}
}
