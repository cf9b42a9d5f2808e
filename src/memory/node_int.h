/*
 * node_int.h — what node.c, node_query.c and node_merge.c share; private
 * to those three (memory layer).
 */
#ifndef ZC_NODE_INT_H
#define ZC_NODE_INT_H

#include "memory/memory.h"

/* Loads a node op->ctx may change: ZCOR_EFORBIDDEN for a global one from
 * a private conversation. *node is the caller's (NULL on failure). */
int zc_node_load_writable(struct zc_op *op, const char *id, json_t **node, struct zc_err *e);
/* Runs st (already bound) and appends the visible nodes to arr. */
int zc_node_collect(struct zc_op *op, sqlite3_stmt *st, json_t *arr, struct zc_err *e);

#endif
