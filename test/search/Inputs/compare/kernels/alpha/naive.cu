// alpha (naive)
int main() { return 0; }
