/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-chunk-assembler.h: reassemble chunked messages with the limits of DESIGN §5. */
#pragma once

#include <glib.h>

#include "chp-frame.h"

G_BEGIN_DECLS

#define CHP_CHUNK_THRESHOLD     (512 * 1024)
#define CHP_CHUNK_SIZE          (256 * 1024)
#define CHP_CHUNK_MAX_MESSAGE   (16 * 1024 * 1024)
#define CHP_CHUNK_MAX_TRANSFERS 8
#define CHP_CHUNK_TIMEOUT_MS    30000

typedef struct _ChpChunkAssembler ChpChunkAssembler;

/* @frame is NUL-terminated and valid only during the call. */
typedef void (*ChpChunkFunc) (const char *frame,
                              gsize       len,
                              gpointer    user_data);

ChpChunkAssembler *chp_chunk_assembler_new       (void);
void               chp_chunk_assembler_free      (ChpChunkAssembler *self);
GBytes            *chp_chunk_assembler_add       (ChpChunkAssembler *self,
                                                  const ChpFrame    *chunk,
                                                  gint64             now_ms,
                                                  GError           **error);
GString           *chp_chunk_assembler_add_string (ChpChunkAssembler *self,
                                                   const ChpFrame    *chunk,
                                                   gint64             now_ms,
                                                   GError           **error);
GString           *chp_chunk_assembler_add_decoded (ChpChunkAssembler *self,
                                                    const ChpFrame    *chunk,
                                                    GBytes            *slice,
                                                    gint64             now_ms,
                                                    GError           **error);
GBytes            *chp_chunk_decode              (const ChpFrame    *chunk);
GString           *chp_chunk_assembler_take_buffer (ChpChunkAssembler *self,
                                                    gsize              size);
void               chp_chunk_assembler_recycle   (ChpChunkAssembler *self,
                                                  GString           *buffer,
                                                  gint64             now_ms);
gsize              chp_chunk_assembler_get_spare_bytes (ChpChunkAssembler *self);
guint              chp_chunk_assembler_expire    (ChpChunkAssembler *self,
                                                  gint64             now_ms);
guint              chp_chunk_assembler_get_n_transfers (ChpChunkAssembler *self);
gsize              chp_chunk_assembler_get_pending_bytes (ChpChunkAssembler *self);

GPtrArray         *chp_chunk_split               (const char        *message,
                                                  gsize              len,
                                                  const char        *transfer_id);
void               chp_chunk_split_foreach       (const char        *message,
                                                  gsize              len,
                                                  const char        *transfer_id,
                                                  ChpChunkFunc       func,
                                                  gpointer           user_data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpChunkAssembler, chp_chunk_assembler_free)

G_END_DECLS
