/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-hold-row.c: the person decides on an act the browser held instead of doing. Everything the
 * card quotes (the control's label, the site, the field values) came from a page or an agent: it
 * goes into plain labels, bounded, never markup, and a credential field shows only its length.
 * The buttons are widget actions: nothing on the session bus can press them. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-hold-row"

#include "chp-hold-row.h"

#include "chp-a11y.h"
#include "chp-handoff-row.h"

#include <glib/gi18n.h>

/* The core keeps at most 30 fields of a hold; the card shows them all, each on at most
 * FIELD_LINES lines, so no page can make the card as tall as it likes. */
#define FIELD_LINES 3
#define ERROR_CHARS 200

struct _ChpHoldRow
{
  GtkListBoxRow parent_instance;

  GtkImage *kind_image;
  GtkLabel *title_label;
  GtkLabel *waited_label;
  GtkLabel *details_label;
  GtkLabel *control_label;
  GtkLabel *elsewhere_label;
  GtkLabel *fields_heading;
  GtkBox *fields_box;
  GtkLabel *error_label;
  GtkWidget *decline_button;
  GtkWidget *approve_button;
  GtkWidget *always_box;
  GtkLabel *always_label;
  GtkDropDown *duration_dropdown;

  ChpHold *hold;
  ChpEngine *engine;
  guint tick_id;
};

G_DEFINE_FINAL_TYPE (ChpHoldRow, chp_hold_row, GTK_TYPE_LIST_BOX_ROW)

/**
 * chp_hold_site_for_title:
 * @site: (nullable): a hold's site, as the browser gave it (an origin)
 *
 * Returns: (transfer full): the host alone when @site is an origin, else @site itself: what a
 *   title or a notification names
 */
char *
chp_hold_site_for_title (const char *site)
{
  g_autoptr(GUri) uri = NULL;

  if (site == NULL || *site == '\0')
    return g_strdup (_("this site"));

  uri = g_uri_parse (site, G_URI_FLAGS_NONE, NULL);
  if (uri != NULL && g_uri_get_host (uri) != NULL && *g_uri_get_host (uri) != '\0')
    return g_strdup (g_uri_get_host (uri));
  return g_strdup (site);
}

/* The kind is a closed set checked by the core: the words are ours, not the page's. */
static char *
kind_title (const char *kind,
            const char *site)
{
  g_autofree char *host = chp_hold_site_for_title (site);

  if (g_strcmp0 (kind, "delete") == 0)
    /* Translators: %s is a site's host name, e.g. "shop.example" */
    return g_strdup_printf (_("Delete on %s?"), host);
  if (g_strcmp0 (kind, "write") == 0)
    /* Translators: %s is a site's host name; the agent would save, create or edit something */
    return g_strdup_printf (_("Change data on %s?"), host);
  /* Translators: %s is a site's host name; the agent would send, pay, post or publish */
  return g_strdup_printf (_("Send on %s?"), host);
}

static const char *
kind_icon (const char *kind)
{
  if (g_strcmp0 (kind, "delete") == 0)
    return "user-trash-symbolic";
  if (g_strcmp0 (kind, "write") == 0)
    return "document-edit-symbolic";
  return "mail-send-symbolic";
}

static char *
field_text (const char *name,
            const char *value,
            gint64      secret_length)
{
  if (name == NULL || *name == '\0')
    name = _("Unnamed field");

  /* A credential field arrives as its length alone; there is no value to show, ever. */
  if (value == NULL)
    {
      int length = (int) CLAMP (secret_length, 0, G_MAXINT);

      /* Translators: a password-like field of a form: its name, then how long what is typed
       * in it is, e.g. "Password: filled, 8 characters" */
      return g_strdup_printf (ngettext ("%s: filled, %d character", "%s: filled, %d characters",
                                        length),
                              name, length);
    }
  if (*value == '\0')
    /* Translators: a form field with nothing in it, e.g. "Phone: empty" */
    return g_strdup_printf (_("%s: empty"), name);
  /* Translators: a form field and its value, e.g. "Email: ada@example.com" */
  return g_strdup_printf (_("%s: %s"), name, value);
}

static GtkWidget *
new_field_label (const char *text)
{
  GtkWidget *label = gtk_label_new (NULL);

  /* Page text: plain, wrapped, and cut after a few lines. */
  gtk_label_set_use_markup (GTK_LABEL (label), FALSE);
  gtk_label_set_text (GTK_LABEL (label), text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_lines (GTK_LABEL (label), FIELD_LINES);
  gtk_label_set_max_width_chars (GTK_LABEL (label), 60);
  gtk_label_set_width_chars (GTK_LABEL (label), 10);
  return label;
}

static void
update_waited (ChpHoldRow *self)
{
  gint64 created_at = chp_hold_get_created_at (self->hold);
  g_autofree char *waited = NULL;

  /* A browser that gave no time (or a clock far off) says nothing rather than nonsense. */
  if (created_at <= 0 || created_at > g_get_real_time () / 1000 + 60 * 1000)
    {
      gtk_widget_set_visible (GTK_WIDGET (self->waited_label), FALSE);
      return;
    }
  waited = chp_handoff_waited_in_words (created_at);
  gtk_label_set_text (self->waited_label, waited);
  gtk_widget_set_visible (GTK_WIDGET (self->waited_label), TRUE);
}

/* "Always allow" only where the engine would make the rule: a held write, on a web site, by an
 * agent it knows by name. Never offered for a send or a delete. */
static void
fill_always (ChpHoldRow *self)
{
  gboolean offered = chp_engine_can_allow_always (self->engine, self->hold);
  g_autofree char *host = NULL;
  g_autofree char *text = NULL;

  gtk_widget_set_visible (self->always_box, offered);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "hold.always-allow", offered);
  if (!offered)
    return;

  host = chp_hold_site_for_title (chp_hold_get_site (self->hold));
  /* Translators: the first %s is a site's host name, the second an agent's name, e.g.
   * "In any browser, always allow changes on notes.example by Claude Code". The rule covers
   * that agent in every browser paired with Chaperone, not only the one this card came from,
   * as the rule's row in Grants says. */
  text = g_strdup_printf (_("In any browser, always allow changes on %s by %s"), host,
                          chp_engine_get_hold_agent (self->engine, self->hold));
  gtk_label_set_text (self->always_label, text);
  chp_a11y_name_dropdown (self->duration_dropdown, _("How long to always allow"));
}

/* A name the page gave, or words saying it gave none. */
static const char *
named (const char *name)
{
  /* Translators: in place of the name of an element the page gave no name, e.g.
   * "Drop: “(no name)” onto “Trash”" */
  return *name != '\0' ? name : _("(no name)");
}

/* The act the card is about, in the app's language, from the parts the page named: the control,
 * and the element the act starts from (the dragged one of a drop, the field a key is pressed in). */
static char *
control_text_of (ChpHold *hold)
{
  const char *control = chp_hold_get_control (hold);
  const char *source = chp_hold_get_source (hold);
  const char *reason = chp_hold_get_reason (hold);

  if (g_str_equal (reason, "drop") && source != NULL)
    /* Translators: what the agent would drag, then where it would drop it, as the page names
     * them, e.g. "Drop: “Order 4411” onto “Trash”" */
    return g_strdup_printf (_("Drop: “%s” onto “%s”"), named (source), named (control));
  if (g_str_equal (reason, "key") && source != NULL)
    /* Translators: a key press that would send what is in a field, e.g.
     * "Key: Enter in “Write your message here” (sends it)" */
    return g_strdup_printf (_("Key: %s in “%s” (sends it)"), control, named (source));
  if (g_str_equal (reason, "key") && g_str_equal (chp_hold_get_word (hold), "save") &&
      !g_str_has_suffix (control, " (save)"))   /* an extension before `source` said it so */
    /* Translators: a key press that would save, e.g. "Key: Control+s (saves)" */
    return g_strdup_printf (_("Key: %s (saves)"), control);
  if (*control == '\0')
    return g_strdup (_("Button without a label"));
  if (g_str_equal (reason, "api"))
    /* Translators: a request to the site's own API the agent would make, e.g.
     * "Request: POST /api/messages" */
    return g_strdup_printf (_("Request: %s"), control);
  if (g_str_equal (reason, "key"))
    /* Translators: a key press that is itself the act, e.g. "Key: Enter" */
    return g_strdup_printf (_("Key: %s"), control);
  if (g_str_equal (reason, "drop"))
    /* Translators: a drop as an extension before `source` named it, both ends in one, e.g.
     * "Drop: "Order 4411" onto "Trash"" */
    return g_strdup_printf (_("Drop: %s"), control);
  /* Translators: the label of the button the agent pressed, as the page shows it */
  return g_strdup_printf (_("Button: %s"), control);
}

static void
fill (ChpHoldRow *self)
{
  ChpDevice *device = chp_device_list_lookup (chp_engine_get_devices (self->engine),
                                              chp_hold_get_device_id (self->hold));
  const char *kind = chp_hold_get_kind (self->hold);
  const char *reason = chp_hold_get_reason (self->hold);
  const char *site = chp_hold_get_site (self->hold);
  guint n_fields = chp_hold_get_n_fields (self->hold);
  g_autofree char *title = kind_title (kind, site);
  g_autofree char *details = NULL;
  g_autofree char *control_text = NULL;

  gtk_image_set_from_icon_name (self->kind_image, kind_icon (kind));
  gtk_label_set_text (self->title_label, title);

  /* Translators: which browser, then which site, e.g. "Chromium · https://example.org" */
  details = g_strdup_printf (_("%s · %s"),
                             device != NULL ? chp_device_get_name (device) : _("Unknown browser"),
                             site != NULL && *site != '\0' ? site : _("Unknown site"));
  gtk_label_set_text (self->details_label, details);

  control_text = control_text_of (self->hold);
  gtk_label_set_text (self->control_label, control_text);

  /* The one reason worth a line of its own: the form would hand its data to another site. */
  gtk_widget_set_visible (GTK_WIDGET (self->elsewhere_label),
                          g_strcmp0 (reason, "form-elsewhere") == 0);

  gtk_widget_set_visible (GTK_WIDGET (self->fields_heading), n_fields > 0);
  gtk_widget_set_visible (GTK_WIDGET (self->fields_box), n_fields > 0);
  for (guint i = 0; i < n_fields; i++)
    {
      const char *name = NULL;
      const char *value = NULL;
      gint64 secret_length = -1;
      g_autofree char *text = NULL;

      if (!chp_hold_get_field (self->hold, i, &name, &value, &secret_length))
        break;
      text = field_text (name, value, secret_length);
      gtk_box_append (self->fields_box, new_field_label (text));
    }

  fill_always (self);
  update_waited (self);
}

static gboolean
tick_cb (gpointer user_data)
{
  update_waited (CHP_HOLD_ROW (user_data));
  return G_SOURCE_CONTINUE;
}

/* While the browser has the person's answer, a second press must not send another. */
static void
set_busy (ChpHoldRow *self,
          gboolean    busy)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "hold.approve", !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "hold.decline", !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "hold.always-allow",
                                 !busy && gtk_widget_get_visible (self->always_box));
}

static void
show_error (ChpHoldRow *self,
            const char *message)
{
  const char *end;
  g_autofree char *cut = NULL;
  g_autofree char *text = NULL;

  /* The browser's words, cut to a sensible length at a character boundary. */
  if (message == NULL || !g_utf8_validate (message, -1, NULL))
    message = "";
  end = message;
  for (guint i = 0; *end != '\0' && i < ERROR_CHARS; i++)
    end = g_utf8_next_char (end);
  cut = g_strndup (message, end - message);

  /* Translators: %s is why the browser did not do what the person asked */
  text = g_strdup_printf (_("Nothing was done: %s"), cut);
  gtk_label_set_text (self->error_label, text);
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), TRUE);
}

static void
resolved_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(ChpHoldRow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_person_call_finish (CHP_ENGINE (source), result, &error);

  /* The hold ended while the browser answered, and its card went with it. */
  if (self->hold == NULL)
    return;

  if (node == NULL)
    {
      /* The hold is still held as far as anyone knows: say why nothing happened, and let the
       * person try again. */
      g_debug ("hold: %s", error->message);
      set_busy (self, FALSE);
      show_error (self, error->message);
      return;
    }

  /* The browser answers with the hold as it now is; when it ended, the browser's hold.changed
   * takes the card away. One still held (the browser did nothing) may be pressed again. */
  if (JSON_NODE_HOLDS_OBJECT (node) &&
      g_strcmp0 (json_object_get_string_member_with_default (json_node_get_object (node),
                                                             "state", ""), "held") == 0)
    set_busy (self, FALSE);
}

static void
resolve (ChpHoldRow *self,
         const char *outcome)
{
  set_busy (self, TRUE);
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), FALSE);
  chp_engine_resolve_hold_async (self->engine,
                                 chp_hold_get_device_id (self->hold),
                                 chp_hold_get_id (self->hold),
                                 outcome, resolved_cb, g_object_ref (self));
}

static void
approve_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  resolve (CHP_HOLD_ROW (widget), "approve");
}

/* Seconds from now to the end of the person's day (local time), at least a minute. */
static guint
seconds_until_tomorrow (void)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autoptr(GDateTime) midnight = g_date_time_new_local (g_date_time_get_year (now),
                                                         g_date_time_get_month (now),
                                                         g_date_time_get_day_of_month (now),
                                                         0, 0, 0);
  g_autoptr(GDateTime) tomorrow = g_date_time_add_days (midnight, 1);
  GTimeSpan span = g_date_time_difference (tomorrow, now) / G_TIME_SPAN_SECOND;

  return (guint) CLAMP (span, 60, 24 * 3600);
}

/**
 * chp_hold_row_duration_seconds:
 * @choice: the position in the card's duration menu: 1 hour, today, 30 days
 *
 * Returns: how long a rule made with that choice stands, in seconds
 */
guint
chp_hold_row_duration_seconds (guint choice)
{
  switch (choice)
    {
    case 1:
      return seconds_until_tomorrow ();
    case 2:
      return CHP_APPROVAL_RULE_MAX_SECONDS;
    default:
      return 3600;
    }
}

/* The person's "Always allow": the rule is made and this hold approved (chp-engine-rules.c). */
static void
always_allow_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  ChpHoldRow *self = CHP_HOLD_ROW (widget);
  guint seconds = chp_hold_row_duration_seconds (gtk_drop_down_get_selected (self->duration_dropdown));

  /* Only where the card offers it, however the action was reached. */
  if (!gtk_widget_get_visible (self->always_box))
    return;

  set_busy (self, TRUE);
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), FALSE);
  chp_engine_allow_always_async (self->engine, self->hold, seconds, resolved_cb,
                                 g_object_ref (self));
}

static void
decline_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  resolve (CHP_HOLD_ROW (widget), "decline");
}

ChpHold *
chp_hold_row_get_hold (ChpHoldRow *self)
{
  g_return_val_if_fail (CHP_IS_HOLD_ROW (self), NULL);

  return self->hold;
}

static void
chp_hold_row_dispose (GObject *object)
{
  ChpHoldRow *self = CHP_HOLD_ROW (object);

  g_clear_handle_id (&self->tick_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_HOLD_ROW);
  g_clear_object (&self->hold);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (chp_hold_row_parent_class)->dispose (object);
}

static void
chp_hold_row_class_init (ChpHoldRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_hold_row_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-hold-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, kind_image);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, waited_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, details_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, control_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, elsewhere_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, fields_heading);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, fields_box);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, error_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, decline_button);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, approve_button);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, always_box);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, always_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHoldRow, duration_dropdown);

  gtk_widget_class_install_action (widget_class, "hold.approve", NULL, approve_action);
  gtk_widget_class_install_action (widget_class, "hold.decline", NULL, decline_action);
  gtk_widget_class_install_action (widget_class, "hold.always-allow", NULL, always_allow_action);
}

static void
chp_hold_row_init (ChpHoldRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  chp_a11y_name_buttons (GTK_WIDGET (self));
}

GtkWidget *
chp_hold_row_new (ChpHold   *hold,
                  ChpEngine *engine)
{
  ChpHoldRow *self;

  g_return_val_if_fail (CHP_IS_HOLD (hold), NULL);
  g_return_val_if_fail (CHP_IS_ENGINE (engine), NULL);

  self = g_object_new (CHP_TYPE_HOLD_ROW, NULL);
  self->hold = g_object_ref (hold);
  self->engine = g_object_ref (engine);
  fill (self);
  /* "Waiting for N minutes" keeps counting. */
  self->tick_id = g_timeout_add_seconds (30, tick_cb, self);

  return GTK_WIDGET (self);
}
