/**
 * The administration pages in navigation order. A leaf module (the layout draws the bar from it, the pages import
 * the layout), so it can never close an import cycle. Adding a page: see CONSOLE_PAGES in src/composition.ts. `short` is what a
 * phone shows, so the bar stays on one line at 390 px; the accessible name is always `label`.
 */
export const ADMIN_NAV = [
  { id: 'keys', href: '/admin', label: 'API keys', short: 'Keys' },
  { id: 'assistants', href: '/admin/assistants', label: 'Connected assistants', short: 'Assistants' },
  { id: 'memories', href: '/admin/memories', label: 'Memories', short: 'Memories' },
  { id: 'inbox', href: '/admin/inbox', label: 'Data issues', short: 'Issues' },
  { id: 'history', href: '/admin/history', label: 'Query history', short: 'History' },
  { id: 'jobs', href: '/admin/jobs', label: 'Long queries', short: 'Jobs' },
  { id: 'catalog', href: '/admin/catalog', label: 'Catalog', short: 'Catalog' },
] as const;

export type AdminPageId = (typeof ADMIN_NAV)[number]['id'];
