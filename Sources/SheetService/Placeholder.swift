enum _Placeholder {}
