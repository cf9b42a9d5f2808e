// dom.js — building elements. Text (memory titles, contents, names, any
// data from the server) only ever goes in through text nodes, never as
// HTML: h() has no innerHTML path at all.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A labelled field: label + control, the label's for= tied to the control.
let seq = 0;
export function field(labelText, control) {
  if (!control.id) control.id = `f${++seq}`;
  return h('div', {}, h('label', { for: control.id }, labelText), control);
}

export function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

export function splitList(v) {
  return String(v || '').split(/[,，、\n]/).map((x) => x.trim()).filter(Boolean);
}
