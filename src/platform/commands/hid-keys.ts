/** USB HID usage ids of the keyboard page (0x07), by the names console and devices use. */
function buildKeyMap(): Record<string, number> {
  const keys: Record<string, number> = {}
  for (let i = 0; i < 26; i++) keys[String.fromCharCode(65 + i)] = 4 + i // A=4 … Z=29
  for (let d = 1; d <= 9; d++) keys[String(d)] = 29 + d // 1=30 … 9=38
  keys['0'] = 39
  Object.assign(keys, {
    ENTER: 40,
    ESC: 41,
    BACKSPACE: 42,
    TAB: 43,
    SPACE: 44,
    MINUS: 45,
    EQUAL: 46,
    LEFTBRACE: 47,
    RIGHTBRACE: 48,
    BACKSLASH: 49,
    SEMICOLON: 51,
    APOSTROPHE: 52,
    GRAVE: 53,
    COMMA: 54,
    DOT: 55,
    SLASH: 56,
    CAPSLOCK: 57,
  })
  for (let f = 1; f <= 12; f++) keys[`F${f}`] = 57 + f // F1=58 … F12=69
  Object.assign(keys, {
    PRINTSCREEN: 70,
    SCROLLLOCK: 71,
    PAUSE: 72,
    INSERT: 73,
    HOME: 74,
    PAGEUP: 75,
    DELETE: 76,
    END: 77,
    PAGEDOWN: 78,
    RIGHT: 79,
    LEFT: 80,
    DOWN: 81,
    UP: 82,
    NUMLOCK: 83,
    MENU: 101,
    LCTRL: 224,
    LSHIFT: 225,
    LALT: 226,
    LGUI: 227,
    RCTRL: 228,
    RSHIFT: 229,
    RALT: 230,
    RGUI: 231,
  })
  return keys
}

export const HID_KEYS: Readonly<Record<string, number>> = Object.freeze(buildKeyMap())
export const HID_KEY_NAMES: readonly string[] = Object.keys(HID_KEYS)
