/**
 * The administration pages in navigation order. A leaf module (the layout draws the bar from it, the pages import
 * the layout), so it can never close an import cycle. Adding a page: see src/web/register.ts.
 */
export const ADMIN_NAV = [
  { id: 'keys', href: '/admin', label: 'API keys' },
  { id: 'assistants', href: '/admin/assistants', label: 'Connected assistants' },
  { id: 'memories', href: '/admin/memories', label: 'Memories' },
  { id: 'catalog', href: '/admin/catalog', label: 'Catalog' },
] as const;

export type AdminPageId = (typeof ADMIN_NAV)[number]['id'];
