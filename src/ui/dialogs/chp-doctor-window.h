/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-doctor-window.h: Check Setup — `chaperone doctor`'s findings in a window, with Fix. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define CHP_TYPE_DOCTOR_WINDOW (chp_doctor_window_get_type ())

G_DECLARE_FINAL_TYPE (ChpDoctorWindow, chp_doctor_window, CHP, DOCTOR_WINDOW, AdwWindow)

ChpDoctorWindow *chp_doctor_window_new        (GtkWindow       *parent,
                                               const char      *data_dir);
void             chp_doctor_window_set_home   (ChpDoctorWindow *self,
                                               const char      *home,
                                               const char      *config,
                                               const char      *runtime_dir,
                                               const char      *policy_path,
                                               const char      *native_host);
void             chp_doctor_window_check      (ChpDoctorWindow *self);
gboolean         chp_doctor_window_is_checking (ChpDoctorWindow *self);

G_END_DECLS
