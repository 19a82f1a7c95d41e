Battention_biasJPƒ‚ZΏiΏWRÒ>V•?Ν„p?4όλ>²Α7=Vλο>Q°ΎΆS?Τ
u?@ξ=M}*ΏΘ$rΏΡΛ?Hª5Ώ£/uΏGαC?>?θή>