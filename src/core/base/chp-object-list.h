/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-object-list.h: the base of the core's short lists (devices, grants, holds, plans…): a
 * GListModel over an array of GObjects of one type, which only its subclass changes. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define CHP_TYPE_OBJECT_LIST (chp_object_list_get_type ())

G_DECLARE_DERIVABLE_TYPE (ChpObjectList, chp_object_list, CHP, OBJECT_LIST, GObject)

struct _ChpObjectListClass
{
  GObjectClass parent_class;

  /* What get_item_type answers: the subclass sets it in its class_init. */
  GType item_type;
};

/* Whether @item is the one sought; @data is what was passed to the search. */
typedef gboolean (*ChpObjectListMatch) (gpointer      item,
                                        gconstpointer data);

guint    chp_object_list_get_len     (ChpObjectList      *self);
gpointer chp_object_list_get_item_at (ChpObjectList      *self,
                                      guint               position);
gpointer chp_object_list_find        (ChpObjectList      *self,
                                      ChpObjectListMatch  match,
                                      gconstpointer       data,
                                      guint              *position);
void     chp_object_list_splice      (ChpObjectList      *self,
                                      guint               position,
                                      guint               n_removals,
                                      gpointer           *additions,
                                      guint               n_additions);
void     chp_object_list_append      (ChpObjectList      *self,
                                      gpointer            item);
void     chp_object_list_remove_at   (ChpObjectList      *self,
                                      guint               position);
void     chp_object_list_remove_all  (ChpObjectList      *self,
                                      ChpObjectListMatch  match,
                                      gconstpointer       data);

G_END_DECLS
