/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-a11y.c: GTK 4.8 names a text button after its raw label and its child label together
 * ("_Revoke Revoke"), libadwaita's dialog buttons included. The names matter twice: screen
 * readers read them, and the end-to-end tests press buttons by name, as a person would. */
#include "config.h"

#include "chp-a11y.h"

/* One explicit name, without the "labelled by" relation GTK 4.8 would append to it. */
void
chp_a11y_set_name (GtkWidget  *widget,
                   const char *name)
{
  g_return_if_fail (GTK_IS_WIDGET (widget));

  gtk_accessible_reset_relation (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_RELATION_LABELLED_BY);
  gtk_accessible_update_property (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
}

/* Names every labelled button under @widget after its label without the mnemonic. */
void
chp_a11y_name_buttons (GtkWidget *widget)
{
  g_return_if_fail (GTK_IS_WIDGET (widget));

  if (GTK_IS_BUTTON (widget) && gtk_button_get_label (GTK_BUTTON (widget)) != NULL)
    {
      const char *label = gtk_button_get_label (GTK_BUTTON (widget));
      g_autoptr(GString) name = g_string_new (NULL);

      for (const char *p = label; *p != '\0'; p++)
        {
          /* "_x" marks a mnemonic; "__" is a literal underscore. */
          if (*p == '_' && gtk_button_get_use_underline (GTK_BUTTON (widget)))
            {
              if (p[1] != '_')
                continue;
              p++;
            }
          g_string_append_c (name, *p);
        }
      chp_a11y_set_name (widget, name->str);
    }

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    chp_a11y_name_buttons (child);
}

/* GTK 4.8's GtkDropDown keeps its name to itself: the toggle button inside, which is what a
 * screen reader lands on and what the person presses, is announced as "GtkToggleButton". */
void
chp_a11y_name_dropdown (GtkDropDown *dropdown,
                        const char  *name)
{
  g_return_if_fail (GTK_IS_DROP_DOWN (dropdown));

  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (dropdown));
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (GTK_IS_TOGGLE_BUTTON (child))
      chp_a11y_set_name (child, name);
}
