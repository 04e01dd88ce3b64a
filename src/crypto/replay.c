/* SPDX-License-Identifier: MIT */
/**
 * @file replay.c
 * Sliding replay window over a receive SPI's IVs, as IPsec keeps over its
 * sequence numbers (RFC 4303 section 3.4.3, RFC 6479's bitmap): the
 * highest IV accepted and one bit for each of the HOMA_PSP_REPLAY_WINDOW
 * IVs at or below it. An IV above the top slides the window; one inside
 * it is accepted once; one below it is too old. Only packets that
 * authenticated move the window, so forged IVs cannot push it.
 */
#include <string.h>

#include "psp_int.h"

#define W HOMA_PSP_REPLAY_WINDOW
/* one word more than W bits: the words of W consecutive IVs never alias */
#define WORDS (W / 64 + 1)

/** word_of() - The bitmap word that holds @iv's bit. */
static uint64_t *word_of(struct psp_replay *w, uint64_t iv)
{
	return &w->bits[(iv / 64) % WORDS];
}

/** mask_of() - @iv's bit within its word. */
static uint64_t mask_of(uint64_t iv)
{
	return 1ull << (iv % 64);
}

/** psp_replay_check() - See psp_int.h. IV 0 is never sent, so never accepted. */
int psp_replay_check(const struct psp_replay *w, uint64_t iv)
{
	if (iv == 0)
		return -1 - HOMA_PSP_REJ_TOO_OLD;
	if (iv > w->top)
		return 0;
	if (w->top - iv >= W)
		return -1 - HOMA_PSP_REJ_TOO_OLD;
	return (*word_of((struct psp_replay *)w, iv) & mask_of(iv)) ? -1 - HOMA_PSP_REJ_REPLAY : 0;
}

/**
 * psp_replay_mark() - See psp_int.h. Moving the top clears the bits of
 * the IVs the window newly covers (whole words: the bitmap holds a spare
 * word, so it keeps every IV of the window and never aliases two).
 */
void psp_replay_mark(struct psp_replay *w, uint64_t iv)
{
	if (iv > w->top) {
		uint64_t from = w->top / 64 + 1, to = iv / 64;

		if (to - from + 1 >= WORDS || w->top == 0)
			memset(w->bits, 0, sizeof(w->bits));
		else
			for (uint64_t k = from; k <= to; k++)
				w->bits[k % WORDS] = 0;
		w->top = iv;
	}
	*word_of(w, iv) |= mask_of(iv);
}
