/* SPDX-License-Identifier: BSD-3-Clause
 * Memory digest messages (htoe/htoe_digest.h, docs/wire-format.md).
 */
#include <errno.h>
#include <string.h>

#include "htoe/htoe_digest.h"
#include "htoe/htoe_wire.h"

int htoe_digest_encode(const struct htoe_digest_msg *m, uint8_t *buf, size_t cap)
{
	if (cap < HTOE_DIGEST_MSG_LEN)
		return -ENOSPC;
	buf[0] = HTOE_DIGEST_PROTO;
	buf[1] = HTOE_DIGEST_VERSION;
	buf[2] = m->type;
	buf[3] = m->status;
	htoe_put_be32(buf + 4, m->session);
	htoe_put_be32(buf + 8, m->id);
	htoe_put_be32(buf + 12, m->crc);
	htoe_put_be32(buf + 16, (uint32_t)(m->offset >> 32));
	htoe_put_be32(buf + 20, (uint32_t)m->offset);
	htoe_put_be32(buf + 24, (uint32_t)(m->len >> 32));
	htoe_put_be32(buf + 28, (uint32_t)m->len);
	return HTOE_DIGEST_MSG_LEN;
}

int htoe_digest_decode(const uint8_t *buf, size_t len, struct htoe_digest_msg *m)
{
	int rc = htoe_ctrl_hdr_check(buf, len, HTOE_DIGEST_PROTO, HTOE_DIGEST_VERSION);

	if (rc)
		return rc;
	if (len != HTOE_DIGEST_MSG_LEN)
		return -EBADMSG;
	memset(m, 0, sizeof(*m));
	m->type = buf[2];
	m->status = buf[3];
	m->session = htoe_get_be32(buf + 4);
	m->id = htoe_get_be32(buf + 8);
	m->crc = htoe_get_be32(buf + 12);
	m->offset = (uint64_t)htoe_get_be32(buf + 16) << 32 | htoe_get_be32(buf + 20);
	m->len = (uint64_t)htoe_get_be32(buf + 24) << 32 | htoe_get_be32(buf + 28);
	if (m->type != HTOE_DIGEST_REQUEST && m->type != HTOE_DIGEST_ANSWER)
		return -EBADMSG;
	if (m->status > HTOE_DIGEST_E_FULL || !m->len || m->offset + m->len < m->offset)
		return -EBADMSG;
	if (m->type == HTOE_DIGEST_REQUEST && (m->status || m->crc))
		return -EBADMSG;
	return 0;
}

void htoe_digest_answer(const struct htoe_digest_msg *q, const uint8_t *mem, uint64_t mem_size,
			struct htoe_digest_msg *a)
{
	*a = *q;
	a->type = HTOE_DIGEST_ANSWER;
	a->crc = 0;
	if (!mem || !mem_size)
		a->status = HTOE_DIGEST_E_NOMEM;
	else if (q->offset >= mem_size || q->len > mem_size - q->offset)
		a->status = HTOE_DIGEST_E_RANGE;
	else {
		a->status = HTOE_DIGEST_OK;
		a->crc = htoe_crc32c(mem + q->offset, q->len);
	}
}

const char *htoe_digest_status_name(unsigned status)
{
	static const char *const names[] = { "ok", "range", "nomem", "full" };

	return status < sizeof(names) / sizeof(names[0]) ? names[status] : "?";
}
