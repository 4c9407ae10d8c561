/**
 * The script of a copy button (the pages' only script, run under the page's CSP nonce): a click copies the field's
 * value (an input) or text (any other element) to the clipboard and says so in the status element; where the
 * clipboard is refused it selects the text and says how to copy it. Without JavaScript the text is still selectable.
 */
export function copyScript(ids: { button: string; field: string; status: string }, what: string): string {
  const id = (s: string) => JSON.stringify(s);
  return `
document.getElementById(${id(ids.button)}).addEventListener('click', async function () {
  var field = document.getElementById(${id(ids.field)});
  var status = document.getElementById(${id(ids.status)});
  var text = 'value' in field ? field.value : field.textContent.trim();
  try { await navigator.clipboard.writeText(text); status.textContent = 'Copied to the clipboard.'; }
  catch (e) {
    if ('select' in field) field.select(); else window.getSelection().selectAllChildren(field);
    status.textContent = ${id(`Press Ctrl+C (or Cmd+C) to copy the selected ${what}.`)};
  }
});`;
}
