/** Reads a file as base64 for POST /orders/parse (contract: `encoding: "base64"`). */
export async function fileToBase64(file: Blob): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer())
  let binary = ''
  const chunk = 0x8000
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk))
  return btoa(binary)
}

export interface ParsedComponent {
  designator: string
  value: string
  package: string
  x: number
  y: number
  rotation: number
  side: 'top' | 'bottom'
}

export interface ParsedPlacement {
  format: string
  units: string
  count: number
  components: ParsedComponent[]
}
