/* chp-needs-page.c: the engine's lists of waiting things (pairing requests, handoffs; later held
 * sends and plans) flattened into one list of cards, oldest kind first. Nothing here decides:
 * each card's buttons are its own widget actions, and Pair stays in the pairing window. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-needs-page"

#include "chp-needs-page.h"

#include "chp-handoff-row.h"
#include "chp-pairing-card.h"

struct _ChpNeedsPage
{
  AdwBin parent_instance;

  GtkStack *stack;
  GtkListBox *list;

  ChpEngine *engine;
  GListModel *items;    /* a GtkFlattenListModel over the engine's lists */
  gulong changed_id;
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

static GtkWidget *
create_card (gpointer item,
             gpointer user_data)
{
  ChpNeedsPage *self = CHP_NEEDS_PAGE (user_data);

  if (CHP_IS_PAIRING_REQUEST (item))
    return chp_pairing_card_new (item);
  if (CHP_IS_HANDOFF (item))
    return chp_handoff_row_new (item, self->engine);

  g_assert_not_reached ();
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
  g_clear_object (&self->items);
  g_set_object (&self->engine, engine);

  if (engine != NULL)
    {
      g_autoptr(GListStore) lists = g_list_store_new (G_TYPE_LIST_MODEL);

      g_list_store_append (lists, chp_engine_get_pairing (engine));
      g_list_store_append (lists, chp_engine_get_handoffs (engine));
      self->items = G_LIST_MODEL (gtk_flatten_list_model_new (G_LIST_MODEL (g_steal_pointer (&lists))));
      gtk_list_box_bind_model (self->list, self->items, create_card, self, NULL);
      self->changed_id = g_signal_connect_swapped (self->items, "items-changed",
                                                   G_CALLBACK (items_changed_cb), self);
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
