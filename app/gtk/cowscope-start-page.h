/* cowscope-start-page.h — the welcome page: record, open, demo, recents. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define COWSCOPE_TYPE_START_PAGE (cowscope_start_page_get_type ())

G_DECLARE_FINAL_TYPE (CowscopeStartPage, cowscope_start_page, COWSCOPE, START_PAGE, AdwBin)

GSettings *cowscope_start_page_get_settings  (CowscopeStartPage *self);
void       cowscope_start_page_set_settings  (CowscopeStartPage *self,
                                              GSettings         *settings);
guint      cowscope_start_page_get_n_recent  (CowscopeStartPage *self);

G_END_DECLS
