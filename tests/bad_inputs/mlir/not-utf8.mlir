// Not UTF-8: ÿþ
