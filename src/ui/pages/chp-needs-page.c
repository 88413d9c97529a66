/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-needs-page.c: the engine's lists of waiting things (pairing requests, handoffs, held acts,
 * waiting plans, agents the loop guard paused) flattened into one list of cards, oldest kind
 * first. Nothing here decides: each card's buttons are its own widget actions, and Pair stays in
 * the pairing window. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-needs-page"

#include "chp-needs-page.h"

#include "chp-attention-row.h"
#include "chp-handoff-row.h"
#include "chp-hold-row.h"
#include "chp-pairing-card.h"
#include "chp-plan-row.h"

#include <glib/gi18n.h>

struct _ChpNeedsPage
{
  AdwBin parent_instance;

  GtkStack *stack;
  GtkListBox *list;

  ChpEngine *engine;
  GListModel *items;    /* a GtkFlattenListModel over the engine's lists */
  gulong changed_id;
  gulong hold_changed_id;
};

enum {
  PROP_0,
  PROP_COUNT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpNeedsPage, chp_needs_page, ADW_TYPE_BIN)

guint
chp_needs_page_get_count (ChpNeedsPage *self)
{
  g_return_val_if_fail (CHP_IS_NEEDS_PAGE (self), 0);

  return self->items != NULL ? g_list_model_get_n_items (self->items) : 0;
}

static void
items_changed_cb (ChpNeedsPage *self)
{
  gtk_stack_set_visible_child_name (self->stack,
                                    chp_needs_page_get_count (self) == 0 ? "empty" : "list");
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COUNT]);
}

/* The engine's lists do not say when an item's state changes, and a GtkFilterListModel does not
 * watch its items: each item's @notify signal makes the filter run again. */
static void
item_notify_cb (GtkFilter  *filter,
                GParamSpec *pspec,
                gpointer    item)
{
  gtk_filter_changed (filter, GTK_FILTER_CHANGE_DIFFERENT);
}

static void
watch_added (GListModel *model,
             guint       position,
             guint       removed,
             guint       added,
             GtkFilter  *filter)
{
  const char *notify = g_object_get_data (G_OBJECT (filter), "chp-notify");

  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(GObject) item = g_list_model_get_item (model, i);

      /* Tied to the filter: the handlers go with the model that uses it. */
      if (item != NULL)
        g_signal_connect_object (item, notify, G_CALLBACK (item_notify_cb), filter,
                                 G_CONNECT_SWAPPED);
    }
}

static GListModel *
filter_watching (GListModel          *model,
                 GtkCustomFilterFunc  match,
                 const char          *notify)
{
  GtkCustomFilter *filter = gtk_custom_filter_new (match, NULL, NULL);

  g_object_set_data (G_OBJECT (filter), "chp-notify", (gpointer) notify);
  g_signal_connect_object (model, "items-changed", G_CALLBACK (watch_added), filter,
                           G_CONNECT_DEFAULT);
  watch_added (model, 0, 0, g_list_model_get_n_items (model), GTK_FILTER (filter));

  return G_LIST_MODEL (gtk_filter_list_model_new (g_object_ref (model), GTK_FILTER (filter)));
}

/* An approved plan is running, not waiting: it shows on the Agents page instead. */
static gboolean
plan_is_waiting (gpointer item,
                 gpointer user_data)
{
  return g_strcmp0 (chp_plan_get_state (CHP_PLAN (item)), "waiting") == 0;
}

/**
 * chp_needs_page_new_model:
 * @engine: the running engine
 *
 * Everything that waits for the person, in the order the page shows it: pairing requests,
 * handoffs, held acts, waiting plans, agents the loop guard paused (one card per agent, however
 * many sessions its pause holds). The app counts the same model for its tray.
 *
 * Returns: (transfer full): a #GListModel of #ChpPairingRequest, #ChpHandoff, #ChpHold,
 *   #ChpPlan and #ChpAgentSession
 */
GListModel *
chp_needs_page_new_model (ChpEngine *engine)
{
  g_autoptr(GListStore) lists = g_list_store_new (G_TYPE_LIST_MODEL);
  g_autoptr(GListModel) plans = NULL;

  g_return_val_if_fail (CHP_IS_ENGINE (engine), NULL);

  plans = filter_watching (G_LIST_MODEL (chp_engine_get_plans (engine)), plan_is_waiting,
                           "notify::state");

  g_list_store_append (lists, chp_engine_get_pairing (engine));
  g_list_store_append (lists, chp_engine_get_handoffs (engine));
  g_list_store_append (lists, chp_engine_get_holds (engine));
  g_list_store_append (lists, plans);
  g_list_store_append (lists, chp_agent_session_list_get_attention (
                                chp_engine_get_agent_sessions (engine)));

  return G_LIST_MODEL (gtk_flatten_list_model_new (G_LIST_MODEL (g_steal_pointer (&lists))));
}

static GtkWidget *
create_card (gpointer item,
             gpointer user_data)
{
  ChpNeedsPage *self = CHP_NEEDS_PAGE (user_data);

  if (CHP_IS_PAIRING_REQUEST (item))
    return chp_pairing_card_new (item);
  if (CHP_IS_HANDOFF (item))
    return chp_handoff_row_new (item, self->engine);
  if (CHP_IS_HOLD (item))
    return chp_hold_row_new (item, self->engine);
  if (CHP_IS_PLAN (item))
    return chp_plan_row_new (item, self->engine);
  if (CHP_IS_AGENT_SESSION (item))
    return chp_attention_row_new (item, chp_engine_get_agent_sessions (self->engine));

  g_assert_not_reached ();
}

/* A hold the person approved can still come to nothing; its card is gone by then, so say how
 * it ended where the person is looking. */
static void
hold_changed_cb (ChpEngine    *engine,
                 ChpHold      *hold,
                 ChpNeedsPage *self)
{
  const char *state = chp_hold_get_state (hold);
  g_autofree char *host = NULL;
  g_autofree char *message = NULL;
  GtkWidget *overlay;

  if (g_strcmp0 (state, "changed") != 0 && g_strcmp0 (state, "failed") != 0)
    return;

  overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);
  if (overlay == NULL)
    return;

  host = chp_hold_site_for_title (chp_hold_get_site (hold));
  if (g_strcmp0 (state, "changed") == 0)
    /* Translators: %s is a site's host name */
    message = g_strdup_printf (_("The page on %s changed, so nothing was done"), host);
  else
    /* Translators: %s is a site's host name */
    message = g_strdup_printf (_("The browser could not do it on %s"), host);
  adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (message));
}

/* @engine: (nullable): the running engine, or %NULL to show nothing */
void
chp_needs_page_set_engine (ChpNeedsPage *self,
                           ChpEngine    *engine)
{
  g_return_if_fail (CHP_IS_NEEDS_PAGE (self));
  g_return_if_fail (engine == NULL || CHP_IS_ENGINE (engine));

  if (self->list != NULL)
    gtk_list_box_bind_model (self->list, NULL, NULL, NULL, NULL);
  if (self->items != NULL)
    g_clear_signal_handler (&self->changed_id, self->items);
  if (self->engine != NULL)
    g_clear_signal_handler (&self->hold_changed_id, self->engine);
  g_clear_object (&self->items);
  g_set_object (&self->engine, engine);

  if (engine != NULL)
    {
      self->items = chp_needs_page_new_model (engine);
      gtk_list_box_bind_model (self->list, self->items, create_card, self, NULL);
      self->changed_id = g_signal_connect_swapped (self->items, "items-changed",
                                                   G_CALLBACK (items_changed_cb), self);
      self->hold_changed_id = g_signal_connect (engine, "hold-changed",
                                                G_CALLBACK (hold_changed_cb), self);
    }

  if (self->stack != NULL)
    items_changed_cb (self);
}

static void
chp_needs_page_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_COUNT:
      g_value_set_uint (value, chp_needs_page_get_count (CHP_NEEDS_PAGE (object)));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_needs_page_dispose (GObject *object)
{
  ChpNeedsPage *self = CHP_NEEDS_PAGE (object);

  chp_needs_page_set_engine (self, NULL);
  /* AdwBin (1.2) unparents its child in its own dispose: let go of it first, or the template
   * and the bin would both unparent it. */
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_NEEDS_PAGE);

  G_OBJECT_CLASS (chp_needs_page_parent_class)->dispose (object);
}

static void
chp_needs_page_class_init (ChpNeedsPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_needs_page_dispose;
  object_class->get_property = chp_needs_page_get_property;

  /* How many things wait: the view switcher's badge. */
  properties[PROP_COUNT] =
    g_param_spec_uint ("count", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-needs-page.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpNeedsPage, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpNeedsPage, list);
}

static void
chp_needs_page_init (ChpNeedsPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_stack_set_visible_child_name (self->stack, "empty");
}
